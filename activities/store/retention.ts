import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';

/** Rows one sweep statement deletes at most (short statements, short locks). */
export const SWEEP_CHUNK = 1000;

/** What one sweep removed, by kind. */
export interface Swept {
  responses: number;
  files: number;
  chatCompletions: number;
  /** Parts of expired uploads (/v1/uploads). */
  uploadParts: number;
  /** Upload rows a day past their expiry, whatever their state. */
  uploads: number;
}

/**
 * Deletes up to `SWEEP_CHUNK` expired stored responses of any tenant, with their event streams (a background
 * response's), and up to as many expired files, stored chat completions, parts of expired uploads and upload rows a
 * day past their expiry (kept that day so a late part or completion is told the upload expired, not that it is
 * unknown). Tenants' own writes remove their expired rows too; this reaches the tenants that stopped writing.
 * Returns what it deleted.
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
  const uploadParts = await db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
    WITH gone AS (
      DELETE FROM upload_parts WHERE id IN (
        SELECT p.id FROM upload_parts p JOIN uploads u ON u.id = p.upload_id
        WHERE u.expires_at <= now() ORDER BY u.expires_at LIMIT ${SWEEP_CHUNK})
      RETURNING id)
    SELECT count(*) AS n FROM gone`);
  const uploads = await sweepTable(db, 'uploads', 86_400);
  return { responses, files, chatCompletions, uploadParts, uploads };
}

/**
 * Deletes up to `SWEEP_CHUNK` rows of a table keyed by `id` with an `expires_at`, expired at least `graceSeconds` ago;
 * how many it deleted.
 */
function sweepTable(
  db: DatabasePool,
  table: 'files' | 'chat_completions' | 'uploads',
  graceSeconds = 0,
): Promise<number> {
  const t = sql.identifier([table]);
  return db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
    WITH gone AS (
      DELETE FROM ${t} WHERE id IN (
        SELECT id FROM ${t} WHERE expires_at <= now() - make_interval(secs => ${graceSeconds})
        ORDER BY expires_at LIMIT ${SWEEP_CHUNK})
      RETURNING id)
    SELECT count(*) AS n FROM gone`);
}
