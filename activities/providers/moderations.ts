import type { Config } from '../../schema/config';
import { AppError } from '../../schema/errors';
import { randomToken } from '../store/ids';
import { postProvider } from './provider-post';

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
  const body = (await postProvider(
    config,
    '/moderations',
    { model: config.openai.moderationModel, input },
    'moderation',
    {
      ...opts,
      missing:
        'The configured provider has no moderation endpoint (/moderations); point OPENAI_BASE_URL at one that does, or set SVC_MODERATION_MODEL to a model it serves.',
    },
  )) as { id?: unknown; results?: unknown } | null;
  const results = body?.results;
  if (!Array.isArray(results) || results.length !== expect || !results.every(isResult))
    throw new AppError('upstream_error', 'The moderation provider sent a malformed answer.');
  const id = typeof body?.id === 'string' && /^[\w-]{1,200}$/.test(body.id) ? body.id : `modr-${randomToken(24)}`;
  return { id, results };
}
