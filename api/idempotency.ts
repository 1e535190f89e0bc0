import { createHash } from 'node:crypto';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from '../activities/store/idempotency';
import { derivedId, newId } from '../activities/store/ids';
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

/** Seeds of requests running under an Idempotency-Key (per request context, gone with it). */
const seeds = new WeakMap<object, string>();
/** Requests that made a derived job id. */
const derived = new WeakSet<object>();

/**
 * The id of the job a create makes: random without an Idempotency-Key; with one, derived from
 * (tenant, route, key, body hash), so a retry after the API died between starting the workflow and
 * storing the answer makes the same record id, hence the same workflow id, and attaches to the job
 * the dead request started instead of creating a second one. One job per request and prefix.
 */
export function jobIdFor(ctx: AppContext, prefix: string): string {
  const seed = seeds.get(ctx);
  if (seed === undefined) return newId(prefix);
  derived.add(ctx);
  return derivedId(prefix, seed);
}

/**
 * Seeds job ids for a context that is not an HTTP request: a tool run inside a plan step or an agent
 * turn passes its step key, so a crash that re-runs the step makes the same job (email, ...) again,
 * which the store keeps once and Temporal refuses to start twice.
 */
export function seedJobIds(ctx: object, seed: string): void {
  seeds.set(ctx, seed);
}

/** True when this request's job id is derived from its Idempotency-Key (a retry may find its job already there). */
export function hasDerivedJobId(ctx: AppContext): boolean {
  return derived.has(ctx);
}

/**
 * Stripe-style idempotency for creates and ticks: with an `Idempotency-Key` header, the first
 * request runs and its answer is stored; a retry with the same key and body gets the same
 * answer (and status) without running again; the same key with another body is 409. A request
 * still in flight under the same key is 409 too (retry later). Failures free the key. A claim
 * left without an answer (the API died mid-request) is taken over by a retry after
 * IDEMPOTENCY_LEASE_SECONDS; keys expire after IDEMPOTENCY_TTL_SECONDS (24 h). Job ids made with
 * `jobIdFor` are derived from the key, so such a retry attaches to the job the dead request started.
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
  // The body hash is part of the seed: once a key expired (24 h), the same key with another body is a new job.
  seeds.set(ctx, JSON.stringify([tenantId, route, key, requestHash]));
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
