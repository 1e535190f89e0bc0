import { createHash } from 'node:crypto';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from '../activities/store/idempotency';
import { AppError } from '../schema/errors';
import { principalOf, type AppContext } from './context';

/** Canonical JSON (sorted keys) so that the same body always hashes the same. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** The stored fingerprint of a request body (sha256 of its canonical JSON). */
export function requestHashOf(body: unknown): string {
  return createHash('sha256')
    .update(canonical(body ?? null))
    .digest('hex');
}

/**
 * Stripe-style idempotency for creates and ticks: with an `Idempotency-Key` header, the first
 * request runs and its answer is stored; a retry with the same key and body gets the same
 * answer (and status) without running again; the same key with another body is 409. A request
 * still in flight under the same key is 409 too (retry later). Failures free the key. A claim
 * left without an answer (the API died mid-request) is taken over by a retry after
 * IDEMPOTENCY_LEASE_SECONDS; keys expire after IDEMPOTENCY_TTL_SECONDS (24 h).
 */
export async function withIdempotency<T>(
  ctx: AppContext,
  route: string,
  body: unknown,
  run: () => Promise<T> | T,
  key: string | undefined,
): Promise<T> {
  // Routes declare `idempotent: true`; the key arrives validated by `schema/headers.ts`.
  if (!key) return run();
  const tenantId = principalOf(ctx).tenantId;
  const requestHash = requestHashOf(body);
  const claim = await claimIdempotencyKey(ctx.deps.db, { tenantId, route, key, requestHash });
  if (!claim.claimed) {
    if (claim.requestHash !== requestHash) {
      throw new AppError(
        'idempotency_conflict',
        'This Idempotency-Key was already used with a different request body.',
      );
    }
    if (claim.response === null)
      throw new AppError('conflict', 'A request with this Idempotency-Key is still in progress; retry shortly.');
    ctx.set('Idempotent-Replayed', 'true');
    return claim.response as T;
  }
  try {
    if (claim.takenOver) ctx.deps.log.info({ route, key }, 'idempotency key taken over from an abandoned request');
    const result = await run();
    // When a takeover raced the original request, the first stored answer is the one every caller gets.
    return (await completeIdempotencyKey(ctx.deps.db, { tenantId, route, key, status: 200, response: result })) as T;
  } catch (err) {
    await releaseIdempotencyKey(ctx.deps.db, { tenantId, route, key });
    throw err;
  }
}
