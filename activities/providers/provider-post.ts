import type { Config } from '../../schema/config';
import { AppError } from '../../schema/errors';
import { retryAfterSeconds } from './errors';

/** How a call to the provider is made: the caller's abort, the time it may take in all, the 404/405 message. */
export interface ProviderCallOptions {
  signal?: AbortSignal;
  /** The whole exchange, the answer's body included (30 s by default). */
  timeoutMs?: number;
  /** The message for a 404/405: a provider without the endpoint. */
  missing?: string;
}

/**
 * POSTs to the configured OpenAI-compatible provider (`OPENAI_BASE_URL` + `path`, its key): `payload` as JSON, or a
 * FormData as multipart (the form sets its own content type). Resolves with the provider's 2xx answer, its body
 * unread; `timeoutMs` keeps running while the body is read (a stream is cut when it passes). `what` names the
 * provider's role in errors ("embeddings", "moderation").
 * @throws AppError service_unavailable (no provider), rate_limited (its 429, with its Retry-After), upstream_error
 * (unreachable, a non-2xx status; `missing` is the message for a 404/405, a provider without the endpoint),
 * upstream_timeout; the caller's abort as it is
 */
export async function openProvider(
  config: Config,
  path: string,
  payload: unknown,
  what: string,
  opts: ProviderCallOptions = {},
): Promise<Response> {
  const base = config.openai.baseUrl;
  if (!base) throw new AppError('service_unavailable', `No ${what} provider is configured (OPENAI_BASE_URL).`);
  const signal = AbortSignal.any([
    AbortSignal.timeout(opts.timeoutMs ?? 30_000),
    ...(opts.signal ? [opts.signal] : []),
  ]);
  const form = payload instanceof FormData;
  let res: Response;
  try {
    res = await fetch(`${base.replace(/\/+$/, '')}${path}`, {
      method: 'POST',
      headers: {
        ...(form ? {} : { 'content-type': 'application/json' }),
        ...(config.openai.apiKey ? { authorization: `Bearer ${config.openai.apiKey}` } : {}),
      },
      body: form ? payload : JSON.stringify(payload),
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
  return res;
}

/**
 * POSTs JSON to the configured OpenAI-compatible provider (openProvider) and returns its JSON answer (null when the
 * body is not JSON).
 * @throws AppError as openProvider
 */
export async function postProvider(
  config: Config,
  path: string,
  payload: unknown,
  what: string,
  opts: ProviderCallOptions = {},
): Promise<unknown> {
  const res = await openProvider(config, path, payload, what, opts);
  return res.json().catch(() => null);
}
