import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

const Row = z.object({ request_hash: z.string(), status: z.number().nullable(), response: z.unknown().nullable() });

/**
 * How long a claim without a stored answer protects its key. A request that claimed a key and
 * then died (API crash between claim and answer) leaves the row with `response IS NULL`; after
 * the lease a retry with the same body takes the claim over instead of getting 409 forever.
 * A takeover of a request that is still alive is harmless, so the lease can be short: a create's
 * job id is derived from the key (api/idempotency.ts), so both make the same record and workflow;
 * a tick re-sends the same Temporal update id, so it attaches to the running update. The first
 * stored answer wins. It only has to outlast a normal request, so that retries see 409 meanwhile.
 */
export const IDEMPOTENCY_LEASE_SECONDS = 15;
/** How long keys (and their stored answers) are kept; older rows are deleted on the next claim. Stripe keeps 24 h. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

export type ClaimResult =
  | { claimed: true; takenOver: boolean }
  | { claimed: false; requestHash: string; status: number | null; response: unknown };

/**
 * Claims an idempotency key for (tenant, route). Returns `claimed` for the first caller (or for
 * a caller taking over an abandoned claim older than the lease, with the same request hash),
 * else the stored record (its response is null while the first request is still in flight).
 * Expired keys of the tenant are deleted first, so an expired key is claimable again.
 */
export async function claimIdempotencyKey(
  db: CommonQueryMethods,
  o: { tenantId: string; route: string; key: string; requestHash: string },
): Promise<ClaimResult> {
  await db.query(sql.unsafe`
    DELETE FROM idempotency_keys
    WHERE tenant_id = ${o.tenantId} AND created_at < now() - make_interval(secs => ${IDEMPOTENCY_TTL_SECONDS})`);
  const r = await db.query(sql.unsafe`
    INSERT INTO idempotency_keys (tenant_id, route, key, request_hash) VALUES (${o.tenantId}, ${o.route}, ${o.key}, ${o.requestHash})
    ON CONFLICT DO NOTHING`);
  if (r.rowCount === 1) return { claimed: true, takenOver: false };
  // An abandoned claim (no answer, older than the lease) with the same body: take it over.
  const taken = await db.query(sql.unsafe`
    UPDATE idempotency_keys SET created_at = now()
    WHERE tenant_id = ${o.tenantId} AND route = ${o.route} AND key = ${o.key} AND request_hash = ${o.requestHash}
      AND response IS NULL AND created_at < now() - make_interval(secs => ${IDEMPOTENCY_LEASE_SECONDS})`);
  if (taken.rowCount === 1) return { claimed: true, takenOver: true };
  const row = await db.maybeOne(sql.type(Row)`
    SELECT request_hash, status, response FROM idempotency_keys WHERE tenant_id = ${o.tenantId} AND route = ${o.route} AND key = ${o.key}`);
  // Released between our insert and this read (the other request failed): claim again.
  if (!row) return claimIdempotencyKey(db, o);
  return { claimed: false, requestHash: row.request_hash, status: row.status, response: row.response };
}

/**
 * Stores the answer of a claimed key. The first answer stored wins: when a takeover raced the
 * original request, the later one gets the stored answer back and should return it.
 * @returns the stored answer
 */
export async function completeIdempotencyKey(
  db: CommonQueryMethods,
  o: { tenantId: string; route: string; key: string; status: number; response: unknown },
): Promise<unknown> {
  const r = await db.query(sql.unsafe`
    UPDATE idempotency_keys SET status = ${o.status}, response = ${sql.json(o.response as never)}
    WHERE tenant_id = ${o.tenantId} AND route = ${o.route} AND key = ${o.key} AND response IS NULL`);
  if (r.rowCount === 1) return o.response;
  const row = await db.maybeOne(sql.type(Row)`
    SELECT request_hash, status, response FROM idempotency_keys WHERE tenant_id = ${o.tenantId} AND route = ${o.route} AND key = ${o.key}`);
  // The row vanished (expired, or released by a failed twin): nothing stored to prefer.
  if (!row || row.response === null) return o.response;
  return row.response;
}

/** Frees a key whose request failed, so that a retry can run again. */
export async function releaseIdempotencyKey(
  db: CommonQueryMethods,
  o: { tenantId: string; route: string; key: string },
): Promise<void> {
  await db.query(sql.unsafe`
    DELETE FROM idempotency_keys WHERE tenant_id = ${o.tenantId} AND route = ${o.route} AND key = ${o.key} AND response IS NULL`);
}
