import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';

/** How long a stored response is kept (OpenAI keeps them 30 days). */
export const RESPONSE_TTL_DAYS = 30;
/** Links of a previous_response_id chain followed at most (each holds a turn or more). */
export const MAX_CHAIN = 1000;

/**
 * Stores a response of POST /v1/responses for GET, input_items and previous_response_id; the tenant's expired ones
 * are removed on the way.
 */
export async function saveResponse(
  db: DatabasePool,
  r: { tenantId: string; id: string; previousId?: string; inputItems: unknown[]; response: { output: unknown[] } },
): Promise<void> {
  const size = JSON.stringify(r.inputItems).length + JSON.stringify(r.response.output).length;
  await db.query(sql.unsafe`
    WITH gone AS (DELETE FROM responses WHERE tenant_id = ${r.tenantId} AND expires_at < now())
    INSERT INTO responses (id, tenant_id, previous_id, input_items, response, size_bytes, expires_at)
    VALUES (${r.id}, ${r.tenantId}, ${r.previousId ?? null}, ${sql.json(r.inputItems as never)},
      ${sql.json(r.response as never)}, ${size}, now() + make_interval(days => ${RESPONSE_TTL_DAYS}))`);
}

/** A stored response of the tenant, as it was answered; null when unknown, expired or another tenant's. */
export async function getResponse(db: DatabasePool, tenantId: string, id: string): Promise<object | null> {
  const row = await db.maybeOne(sql.type(z.object({ response: z.record(z.string(), z.unknown()) }))`
    SELECT response FROM responses WHERE tenant_id = ${tenantId} AND id = ${id} AND expires_at > now()`);
  return row?.response ?? null;
}

/** A stored response's own input items; null when unknown. */
export async function getInputItems(db: DatabasePool, tenantId: string, id: string): Promise<unknown[] | null> {
  const row = await db.maybeOne(sql.type(z.object({ input_items: z.array(z.unknown()) }))`
    SELECT input_items FROM responses WHERE tenant_id = ${tenantId} AND id = ${id} AND expires_at > now()`);
  return row?.input_items ?? null;
}

/**
 * The turns a response continues, oldest first: each stored response of its previous_response_id chain (itself
 * included) with its input items and output. Null when `id` is unknown; `tooLarge` when the turns hold more than
 * `maxBytes` (the walk stops there, so no more than that is read). A chain stops at a response deleted or expired,
 * and after MAX_CHAIN links.
 */
export async function responseChain(
  db: DatabasePool,
  tenantId: string,
  id: string,
  maxBytes: number,
): Promise<Array<{ input_items: unknown[]; output: unknown[] }> | null | 'tooLarge'> {
  const rows = await db.any(sql.type(
    z.object({ input_items: z.array(z.unknown()), output: z.array(z.unknown()), total: z.coerce.number() }),
  )`
    WITH RECURSIVE chain AS (
      SELECT id, previous_id, input_items, response, size_bytes::bigint AS total, 1 AS depth FROM responses
      WHERE tenant_id = ${tenantId} AND id = ${id} AND expires_at > now()
      UNION ALL
      SELECT r.id, r.previous_id, r.input_items, r.response, c.total + r.size_bytes, c.depth + 1 FROM responses r
      JOIN chain c ON r.id = c.previous_id
      WHERE r.tenant_id = ${tenantId} AND r.expires_at > now() AND c.depth < ${MAX_CHAIN} AND c.total <= ${maxBytes}
    )
    SELECT input_items, response -> 'output' AS output, total FROM chain ORDER BY depth DESC`);
  if (!rows.length) return null;
  if (rows[0].total > maxBytes) return 'tooLarge';
  return rows.map((r) => ({ input_items: r.input_items, output: r.output }));
}

/** Deletes a stored response of the tenant; false when there was none. */
export async function deleteResponse(db: DatabasePool, tenantId: string, id: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    DELETE FROM responses WHERE tenant_id = ${tenantId} AND id = ${id} AND expires_at > now()`);
  return r.rowCount > 0;
}
