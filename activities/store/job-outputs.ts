import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { newId } from './ids';

const OutputRow = z.object({
  id: z.string(),
  content: z.string(),
  provider: z.string().nullable(),
  duration_ms: z.number().nullable(),
});

/** The stored output of one job step, or null. Keyed by (job, step key): the idempotency key of a step. */
export async function findJobOutput(db: CommonQueryMethods, tenantId: string, jobId: string, stepKey: string) {
  return db.maybeOne(sql.prepared('job_output_find', OutputRow)`
    SELECT id, content, provider, duration_ms FROM job_outputs WHERE tenant_id = ${tenantId} AND job_id = ${jobId} AND step_key = ${stepKey}`);
}

/** Stores a step output once; a concurrent duplicate keeps the first and returns it. */
export async function saveJobOutput(
  db: CommonQueryMethods,
  o: {
    tenantId: string;
    jobId: string;
    stepKey: string;
    lane: string;
    provider: string | null;
    content: string;
    usage: unknown;
    durationMs: number;
  },
): Promise<{ id: string; content: string; provider: string | null; duration_ms: number | null; fresh: boolean }> {
  const inserted = await db.maybeOne(sql.prepared('job_output_save', OutputRow)`
    INSERT INTO job_outputs (id, tenant_id, job_id, step_key, lane, provider, content, usage, duration_ms)
    VALUES (${newId('out')}, ${o.tenantId}, ${o.jobId}, ${o.stepKey}, ${o.lane}, ${o.provider}, ${o.content},
            ${sql.jsonb((o.usage ?? null) as never)}, ${Math.round(o.durationMs)})
    ON CONFLICT (job_id, step_key) DO NOTHING
    RETURNING id, content, provider, duration_ms`);
  if (inserted) return { ...inserted, fresh: true };
  return { ...(await findJobOutput(db, o.tenantId, o.jobId, o.stepKey))!, fresh: false };
}

/** Full texts of outputs by id, tenant-filtered. */
export async function outputsById(
  db: CommonQueryMethods,
  tenantId: string,
  ids: string[],
): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const rows = await db.any(sql.type(z.object({ id: z.string(), content: z.string() }))`
    SELECT id, content FROM job_outputs WHERE tenant_id = ${tenantId} AND id = ANY(${sql.array(ids, 'text')})`);
  return new Map(rows.map((r) => [r.id, r.content]));
}
