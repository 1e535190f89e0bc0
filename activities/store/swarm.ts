import { sql, type CommonQueryMethods } from 'slonik';
import { SwarmRunRecord } from '../../schema/jobs';

/** A swarm_runs row is the response record, column for column. */
export const SwarmRow = SwarmRunRecord;

const COLS = sql.fragment`id, operation, params, status, progress, result, error, created_at, updated_at`;

export async function insertSwarmRun(
  db: CommonQueryMethods,
  r: { id: string; tenantId: string; operation: string; params: unknown; total: number },
) {
  // An id derived from an Idempotency-Key may already exist (a retry after a crash): keep that row.
  const row = await db.maybeOne(sql.type(SwarmRow)`
    INSERT INTO swarm_runs (id, tenant_id, operation, params, status, progress)
    VALUES (${r.id}, ${r.tenantId}, ${r.operation}, ${sql.jsonb(r.params as never)}, 'queued', ${sql.jsonb({ done: 0, total: r.total })})
    ON CONFLICT (id) DO NOTHING
    RETURNING ${COLS}`);
  return (
    row ?? db.one(sql.type(SwarmRow)`SELECT ${COLS} FROM swarm_runs WHERE id = ${r.id} AND tenant_id = ${r.tenantId}`)
  );
}

export async function saveSwarmRun(
  db: CommonQueryMethods,
  r: {
    id: string;
    tenantId: string;
    status: string;
    progress: { done: number; total: number };
    result?: unknown;
    error?: string | null;
  },
): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE swarm_runs SET status = ${r.status}, progress = ${sql.jsonb(r.progress)},
      result = ${r.result === undefined ? sql.fragment`result` : sql.jsonb(r.result as never)},
      error = ${r.error ?? null}, updated_at = now()
    WHERE id = ${r.id} AND tenant_id = ${r.tenantId}`);
}

export async function getSwarmRun(db: CommonQueryMethods, tenantId: string, id: string) {
  return db.maybeOne(sql.type(SwarmRow)`SELECT ${COLS} FROM swarm_runs WHERE id = ${id} AND tenant_id = ${tenantId}`);
}

/** Removes a run whose workflow never started. */
export async function deleteSwarmRun(db: CommonQueryMethods, tenantId: string, id: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM swarm_runs WHERE id = ${id} AND tenant_id = ${tenantId}`);
}
