import { hitRateLimit } from '../activities/store/flow';
import { AppError } from '../schema/errors';
import type { AppContext } from './context';

/** Requests per address per minute on the public live routes. */
export const PUBLIC_LIMITS = { read: 120, write: 20 } as const;

/**
 * Per-address limit for keyless routes, counted in PostgreSQL so every replica shares the window.
 * @throws AppError rate_limited (429 with Retry-After) over the limit
 */
export async function limitByAddress(ctx: AppContext, kind: keyof typeof PUBLIC_LIMITS): Promise<void> {
  const { hits, resetSeconds } = await hitRateLimit(ctx.deps.db, `${kind}:${ctx.ip}`);
  const limit = PUBLIC_LIMITS[kind];
  ctx.set('RateLimit-Limit', String(limit));
  ctx.set('RateLimit-Remaining', String(Math.max(0, limit - hits)));
  if (hits > limit) {
    throw new AppError(
      'rate_limited',
      `Too many requests from this address: at most ${limit} per minute here. Retry in ${resetSeconds} s.`,
      {
        headers: { 'Retry-After': String(resetSeconds) },
      },
    );
  }
}
