import { randomBytes } from 'node:crypto';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { randomToken } from './ids';
import { sealWith, type Seal } from './sealed';

export const WebhookEndpointRow = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  created_at: z.coerce.number(),
});
export type WebhookEndpointRow = z.infer<typeof WebhookEndpointRow>;

const COLS = sql.fragment`id, url, events, extract(epoch FROM created_at)::int8 AS created_at`;

/** The seal of one endpoint's signing secret (bound to its tenant and id). */
const secretSeal = (db: DatabasePool, tenantId: string, id: string): Promise<Seal> =>
  sealWith(db, 'webhooks', `webhook:${tenantId}:${id}`, 'whk1.');

/**
 * Creates a webhook endpoint with a new signing secret (Standard Webhooks: `whsec_` and 32 random bytes in base64),
 * unless the tenant has `max` already (checked and inserted under a per-tenant lock).
 * @returns the endpoint with its secret, or `{ full: true }`
 */
export async function createWebhookEndpoint(
  db: DatabasePool,
  o: { tenantId: string; url: string; events: string[]; max: number },
): Promise<(WebhookEndpointRow & { secret: string }) | { full: true }> {
  const id = `whep_${randomToken(24)}`;
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const sealed = (await secretSeal(db, o.tenantId, id)).seal(secret);
  return db.transaction(async (tx) => {
    await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${o.tenantId}, 1129))`);
    const held = await tx.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
      SELECT count(*) AS n FROM webhook_endpoints WHERE tenant_id = ${o.tenantId}`);
    if (held >= o.max) return { full: true as const };
    const row = await tx.one(sql.type(WebhookEndpointRow)`
      INSERT INTO webhook_endpoints (id, tenant_id, url, events, secret_sealed)
      VALUES (${id}, ${o.tenantId}, ${o.url}, ${sql.array(o.events, 'text')}, ${sealed})
      RETURNING ${COLS}`);
    return { ...row, secret };
  });
}

/** The tenant's endpoints, oldest first. */
export async function listWebhookEndpoints(db: DatabasePool, tenantId: string): Promise<readonly WebhookEndpointRow[]> {
  return db.any(sql.type(WebhookEndpointRow)`
    SELECT ${COLS} FROM webhook_endpoints WHERE tenant_id = ${tenantId} ORDER BY created_at, id`);
}

/** An endpoint of the tenant; null when unknown. */
export async function getWebhookEndpoint(
  db: DatabasePool,
  tenantId: string,
  id: string,
): Promise<WebhookEndpointRow | null> {
  return db.maybeOne(sql.type(WebhookEndpointRow)`
    SELECT ${COLS} FROM webhook_endpoints WHERE tenant_id = ${tenantId} AND id = ${id}`);
}

/** Deletes an endpoint of the tenant; false when unknown. */
export async function deleteWebhookEndpoint(db: DatabasePool, tenantId: string, id: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`DELETE FROM webhook_endpoints WHERE tenant_id = ${tenantId} AND id = ${id}`);
  return r.rowCount > 0;
}

/** The ids of the tenant's endpoints that take `event`. */
export async function webhookTargets(db: DatabasePool, tenantId: string, event: string): Promise<string[]> {
  const rows = await db.anyFirst(sql.type(z.object({ id: z.string() }))`
    SELECT id FROM webhook_endpoints
    WHERE tenant_id = ${tenantId} AND (cardinality(events) = 0 OR ${event} = ANY(events))
    ORDER BY created_at, id`);
  return [...rows];
}

/** An endpoint's URL and signing secret (for delivery); null when it was deleted meanwhile. */
export async function webhookDelivery(
  db: DatabasePool,
  tenantId: string,
  id: string,
): Promise<{ url: string; secret: string } | null> {
  const row = await db.maybeOne(sql.type(z.object({ url: z.string(), secret_sealed: z.string() }))`
    SELECT url, secret_sealed FROM webhook_endpoints WHERE tenant_id = ${tenantId} AND id = ${id}`);
  if (!row) return null;
  const secret = (await secretSeal(db, tenantId, id)).open(row.secret_sealed);
  if (secret === null) throw new Error(`The signing secret of webhook endpoint ${id} cannot be opened.`);
  return { url: row.url, secret };
}
