import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';

/** Rows one sweep statement deletes at most (short statements, short locks). */
export const SWEEP_CHUNK = 1000;

/** What one sweep removed, by kind. */
export interface Swept {
  responses: number;
  files: number;
  chatCompletions: number;
}

/**
 * Deletes up to `SWEEP_CHUNK` expired stored responses of any tenant, with their event streams (a background
 * response's), and up to as many expired files and stored chat completions. Tenants' own writes remove their expired
 * rows too; this reaches the tenants that stopped writing. Returns what it deleted.
 */
export async function sweepExpiredOnce(db: DatabasePool): Promise<Swept> {
  const responses = await db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
    WITH gone AS (
      DELETE FROM responses WHERE id IN (
        SELECT id FROM responses WHERE expires_at < now() ORDER BY expires_at LIMIT ${SWEEP_CHUNK})
      RETURNING id, tenant_id),
    gone_events AS (
      DELETE FROM events e USING gone g WHERE e.tenant_id = g.tenant_id AND e.stream = 'response:' || g.id)
    SELECT count(*) AS n FROM gone`);
  const files = await sweepTable(db, 'files');
  const chatCompletions = await sweepTable(db, 'chat_completions');
  return { responses, files, chatCompletions };
}

/** Deletes up to `SWEEP_CHUNK` expired rows of a table keyed by `id` with an `expires_at`; how many it deleted. */
function sweepTable(db: DatabasePool, table: 'files' | 'chat_completions'): Promise<number> {
  const t = sql.identifier([table]);
  return db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
    WITH gone AS (
      DELETE FROM ${t} WHERE id IN (SELECT id FROM ${t} WHERE expires_at <= now() ORDER BY expires_at LIMIT ${SWEEP_CHUNK})
      RETURNING id)
    SELECT count(*) AS n FROM gone`);
}
