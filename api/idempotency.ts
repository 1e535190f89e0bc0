import { createHash } from 'node:crypto';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from '../activities/store/idempotency';
import { AppError } from '../schema/errors';
import { principalOf, type AppContext } from './context';

/** Canonical JSON (sorted keys) so that the same body always hashes the same. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v as object).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

const KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * Stripe-style idempotency for creates and ticks: with an `Idempotency-Key` header, the first
 * request runs and its answer is stored; a retry with the same key and body gets the same
 * answer (and status) without running again; the same key with another body is 409. A request
 * still in flight under the same key is 409 too (retry later). Failures free the key.
 */
export async function withIdempotency<T>(ctx: AppContext, route: string, body: unknown, run: () => Promise<T>): Promise<T> {
  const key = ctx.get('Idempotency-Key');
  if (!key) return run();
  if (!KEY.test(key)) throw new AppError('invalid_request', 'Idempotency-Key must be 1-255 printable ASCII characters.');
  const tenantId = principalOf(ctx).tenantId;
  const requestHash = createHash('sha256').update(canonical(body ?? null)).digest('hex');
  const claim = await claimIdempotencyKey(ctx.deps.db, { tenantId, route, key, requestHash });
  if (!claim.claimed) {
    if (claim.requestHash !== requestHash) {
      throw new AppError('idempotency_conflict', 'This Idempotency-Key was already used with a different request body.');
    }
    if (claim.response === null) throw new AppError('conflict', 'A request with this Idempotency-Key is still in progress; retry shortly.');
    ctx.set('Idempotent-Replayed', 'true');
    return claim.response as T;
  }
  try {
    const result = await run();
    await completeIdempotencyKey(ctx.deps.db, { tenantId, route, key, status: 200, response: result });
    return result;
  } catch (err) {
    await releaseIdempotencyKey(ctx.deps.db, { tenantId, route, key });
    throw err;
  }
}
