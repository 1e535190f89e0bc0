import type { Config } from '../../schema/config';
import { AppError } from '../../schema/errors';
import { retryAfterSeconds } from './errors';

/**
 * POSTs JSON to the configured OpenAI-compatible provider (`OPENAI_BASE_URL` + `path`, its key) within `timeoutMs`
 * (30 s by default) and returns its JSON answer (null when the body is not JSON). `what` names the provider's role in
 * errors ("embeddings", "moderation").
 * @throws AppError service_unavailable (no provider), rate_limited (its 429, with its Retry-After), upstream_error
 * (unreachable, a non-2xx status; `missing` is the message for a 404/405, a provider without the endpoint),
 * upstream_timeout; the caller's abort as it is
 */
export async function postProvider(
  config: Config,
  path: string,
  payload: unknown,
  what: string,
  opts: { signal?: AbortSignal; timeoutMs?: number; missing?: string } = {},
): Promise<unknown> {
  const base = config.openai.baseUrl;
  if (!base) throw new AppError('service_unavailable', `No ${what} provider is configured (OPENAI_BASE_URL).`);
  const signal = AbortSignal.any([
    AbortSignal.timeout(opts.timeoutMs ?? 30_000),
    ...(opts.signal ? [opts.signal] : []),
  ]);
  let res: Response;
  try {
    res = await fetch(`${base.replace(/\/+$/, '')}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(config.openai.apiKey ? { authorization: `Bearer ${config.openai.apiKey}` } : {}),
      },
      body: JSON.stringify(payload),
      signal,
    });
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    const timeout = (err as Error).name === 'TimeoutError';
    throw new AppError(
      timeout ? 'upstream_timeout' : 'upstream_error',
      timeout ? `The ${what} provider did not answer in time.` : `The ${what} provider could not be reached.`,
    );
  }
  if (res.status === 429) {
    await res.body?.cancel();
    const after = retryAfterSeconds(res.headers.get('retry-after'));
    throw new AppError('rate_limited', `The ${what} provider is rate limiting requests; retry after ${after} s.`, {
      headers: { 'Retry-After': after },
    });
  }
  if (!res.ok) {
    await res.body?.cancel();
    const missing = (res.status === 404 || res.status === 405) && opts.missing;
    throw new AppError('upstream_error', missing || `The ${what} provider answered HTTP ${res.status}.`);
  }
  return res.json().catch(() => null);
}
