import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

const Row = z.object({ request_hash: z.string(), status: z.number().nullable(), response: z.unknown().nullable() });

/**
 * Claims an idempotency key for (tenant, route). Returns `claimed` for the first caller, else
 * the stored record (its response is null while the first request is still in flight).
 */
export async function claimIdempotencyKey(
  db: CommonQueryMethods,
  o: { tenantId: string; route: string; key: string; requestHash: string },
): Promise<{ claimed: true } | { claimed: false; requestHash: string; status: number | null; response: unknown }> {
  const r = await db.query(sql.unsafe`
    INSERT INTO idempotency_keys (tenant_id, route, key, request_hash) VALUES (${o.tenantId}, ${o.route}, ${o.key}, ${o.requestHash})
    ON CONFLICT DO NOTHING`);
  if (r.rowCount === 1) return { claimed: true };
  const row = await db.one(sql.type(Row)`
    SELECT request_hash, status, response FROM idempotency_keys WHERE tenant_id = ${o.tenantId} AND route = ${o.route} AND key = ${o.key}`);
  return { claimed: false, requestHash: row.request_hash, status: row.status, response: row.response };
}

export async function completeIdempotencyKey(
  db: CommonQueryMethods,
  o: { tenantId: string; route: string; key: string; status: number; response: unknown },
): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE idempotency_keys SET status = ${o.status}, response = ${sql.jsonb(o.response as never)}
    WHERE tenant_id = ${o.tenantId} AND route = ${o.route} AND key = ${o.key}`);
}

/** Frees a key whose request failed, so that a retry can run again. */
export async function releaseIdempotencyKey(db: CommonQueryMethods, o: { tenantId: string; route: string; key: string }): Promise<void> {
  await db.query(sql.unsafe`
    DELETE FROM idempotency_keys WHERE tenant_id = ${o.tenantId} AND route = ${o.route} AND key = ${o.key} AND response IS NULL`);
}
