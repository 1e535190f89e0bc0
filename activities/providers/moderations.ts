import type { Config } from '../../schema/config';
import { AppError } from '../../schema/errors';
import { randomToken } from '../store/ids';
import { retryAfterSeconds } from './errors';

/** One moderation result as the provider gave it (its categories, scores and what else it says). */
export type ModerationResult = {
  flagged: boolean;
  categories: Record<string, boolean>;
  category_scores: Record<string, number>;
} & Record<string, unknown>;

const isResult = (r: unknown): r is ModerationResult => {
  if (!r || typeof r !== 'object') return false;
  const { flagged, categories, category_scores: scores } = r as Record<string, unknown>;
  const record = (v: unknown, type: 'boolean' | 'number') =>
    !!v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => typeof x === type);
  return typeof flagged === 'boolean' && record(categories, 'boolean') && record(scores, 'number');
};

/**
 * Classifies inputs with the configured provider's moderation endpoint (OpenAI protocol, `OPENAI_BASE_URL`
 * `/moderations`, model SVC_MODERATION_MODEL): as many results as `expect` says, in order.
 * @throws AppError service_unavailable (no provider), rate_limited (its 429, with Retry-After), upstream_error (its
 * failure, no moderation endpoint, a malformed answer), upstream_timeout
 */
export async function moderate(
  config: Config,
  input: unknown,
  expect: number,
  opts: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<{ id: string; results: ModerationResult[] }> {
  const base = config.openai.baseUrl;
  if (!base) throw new AppError('service_unavailable', 'No moderation provider is configured (OPENAI_BASE_URL).');
  const signal = AbortSignal.any([
    AbortSignal.timeout(opts.timeoutMs ?? 30_000),
    ...(opts.signal ? [opts.signal] : []),
  ]);
  let res: Response;
  try {
    res = await fetch(`${base.replace(/\/+$/, '')}/moderations`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(config.openai.apiKey ? { authorization: `Bearer ${config.openai.apiKey}` } : {}),
      },
      body: JSON.stringify({ model: config.openai.moderationModel, input }),
      signal,
    });
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    const timeout = (err as Error).name === 'TimeoutError';
    throw new AppError(
      timeout ? 'upstream_timeout' : 'upstream_error',
      timeout ? 'The moderation provider did not answer in time.' : 'The moderation provider could not be reached.',
    );
  }
  if (res.status === 429) {
    await res.body?.cancel();
    const after = retryAfterSeconds(res.headers.get('retry-after'));
    throw new AppError('rate_limited', `The moderation provider is rate limiting requests; retry after ${after} s.`, {
      headers: { 'Retry-After': after },
    });
  }
  if (res.status === 404 || res.status === 405) {
    await res.body?.cancel();
    throw new AppError(
      'upstream_error',
      `The configured provider has no moderation endpoint (HTTP ${res.status} from /moderations); point OPENAI_BASE_URL at one that does, or set SVC_MODERATION_MODEL to a model it serves.`,
    );
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new AppError('upstream_error', `The moderation provider answered HTTP ${res.status}.`);
  }
  const body = (await res.json().catch(() => null)) as { id?: unknown; results?: unknown } | null;
  const results = body?.results;
  if (!Array.isArray(results) || results.length !== expect || !results.every(isResult))
    throw new AppError('upstream_error', 'The moderation provider sent a malformed answer.');
  const id = typeof body?.id === 'string' && /^[\w-]{1,200}$/.test(body.id) ? body.id : `modr-${randomToken(24)}`;
  return { id, results };
}
