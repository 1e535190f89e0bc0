import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { ResearchReport, ResearchSource, ResearchStatus, type ResearchState } from '../../schema/research';
import { streams } from '../../schema/workflow-ids';
import { eventInsertFrom } from './events';
import { newId } from './ids';

const Row = z.object({
  id: z.string(),
  tenant_id: z.string(),
  status: ResearchStatus,
  stage: z.string(),
  query: z.string(),
  depth: z.string(),
  max_sources: z.number().int(),
  plan: z.array(z.string()).nullable(),
  sources: z.array(ResearchSource),
  report: ResearchReport.nullable(),
  error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ResearchRow = z.infer<typeof Row>;

export function researchView(r: ResearchRow): ResearchState {
  const { tenant_id: _tenant, ...rest } = r;
  void _tenant;
  return rest;
}

export async function createResearch(
  db: CommonQueryMethods,
  o: { id?: string; tenantId: string; query: string; depth: string; maxSources: number },
): Promise<ResearchRow> {
  const id = o.id ?? newId('res');
  // An id derived from an Idempotency-Key may already exist (a retry after a crash): keep that row.
  const row = await db.maybeOne(sql.type(Row)`
    INSERT INTO research_jobs (id, tenant_id, query, depth, max_sources, status)
    VALUES (${id}, ${o.tenantId}, ${o.query}, ${o.depth}, ${o.maxSources}, 'queued')
    ON CONFLICT (id) DO NOTHING
    RETURNING *`);
  return row ?? db.one(sql.type(Row)`SELECT * FROM research_jobs WHERE id = ${id} AND tenant_id = ${o.tenantId}`);
}

export async function getResearch(db: CommonQueryMethods, tenantId: string, id: string): Promise<ResearchRow | null> {
  return db.maybeOne(sql.type(Row)`SELECT * FROM research_jobs WHERE tenant_id = ${tenantId} AND id = ${id}`);
}

/** Sets the given fields; a finished job (completed, failed, cancelled) is never changed again. */
export async function updateResearch(
  db: CommonQueryMethods,
  tenantId: string,
  id: string,
  f: {
    status?: z.infer<typeof ResearchStatus>;
    stage?: string;
    plan?: string[];
    sources?: unknown[];
    report?: unknown;
    error?: string;
  },
): Promise<void> {
  const sets = [sql.fragment`updated_at = now()`];
  if (f.status) sets.push(sql.fragment`status = ${f.status}`);
  if (f.stage) sets.push(sql.fragment`stage = ${f.stage}`);
  if (f.plan) sets.push(sql.fragment`plan = ${sql.jsonb(f.plan)}`);
  if (f.sources) sets.push(sql.fragment`sources = ${sql.jsonb(f.sources as never)}`);
  if (f.report) sets.push(sql.fragment`report = ${sql.jsonb(f.report as never)}`);
  if (f.error) sets.push(sql.fragment`error = ${f.error}`);
  await db.query(sql.unsafe`
    UPDATE research_jobs SET ${sql.join(sets, sql.fragment`, `)}
    WHERE tenant_id = ${tenantId} AND id = ${id} AND status NOT IN ('completed', 'failed', 'cancelled')`);
}

/**
 * Appends an event to the job's stream unless the job has finished (completed, failed, cancelled), as
 * `updateResearch` refuses such a write: a step still running after a cancel adds nothing after the stream's `done`.
 * The job's row is read FOR SHARE in the same statement, so the ending write (`researchFinish`, which appends `done`
 * after it commits) waits for this append's transaction, or this append sees the job ended. Returns the event's id,
 * or null when refused.
 */
export async function appendResearchEvent(
  db: CommonQueryMethods,
  o: { tenantId: string; jobId: string; type: string; data: unknown },
): Promise<number | null> {
  const live = sql.fragment`(SELECT 1 FROM research_jobs
    WHERE tenant_id = ${o.tenantId} AND id = ${o.jobId} AND status NOT IN ('completed', 'failed', 'cancelled')
    FOR SHARE) AS live`;
  return db.maybeOneFirst(sql.type(z.object({ id: z.number().int() }))`
    WITH ev AS (${eventInsertFrom(live, { tenantId: o.tenantId, stream: streams.research(o.jobId), type: o.type, data: o.data })})
    SELECT id FROM ev`);
}
