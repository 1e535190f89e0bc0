import { sql } from 'slonik';
import { z } from 'zod';
import type { LearnBody, LearnJobState, LearnStatus } from '../../schema/learn';
import type { Db } from './db';
import { newId } from './ids';

const JobRow = z.object({
  id: z.string(),
  status: z.enum(['queued', 'running', 'completed', 'failed', 'cancelled']),
  space_id: z.string().nullable(),
  total: z.number(),
  error: z.string().nullable(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
});

const SourceRow = z.object({
  idx: z.number(),
  kind: z.enum(['url', 'text', 'document']),
  url: z.string().nullable(),
  title: z.string().nullable(),
  source_document_id: z.string().nullable(),
  status: z.enum(['pending', 'running', 'completed', 'failed', 'cancelled']),
  error: z.string().nullable(),
  document_id: z.string().nullable(),
  chunks: z.number().nullable(),
});

const SourceSpec = z.object({
  kind: z.enum(['url', 'text', 'document']),
  url: z.string().nullable(),
  title: z.string().nullable(),
  text: z.string().nullable(),
  source_document_id: z.string().nullable(),
  status: z.enum(['pending', 'running', 'completed', 'failed', 'cancelled']),
  space_id: z.string().nullable(),
});
export type SourceSpec = z.infer<typeof SourceSpec>;

/** Creates a queued job with its sources (inline texts stay here, out of workflow history). */
export async function createLearnJob(
  db: Db,
  opts: { id?: string; tenantId: string; body: LearnBody },
): Promise<{ id: string; total: number }> {
  // An id derived from an Idempotency-Key may already exist (a retry after a crash): keep that job and its sources.
  const id = opts.id ?? newId('lrn');
  const { sources, space_id } = opts.body;
  await db.transaction(async (tx) => {
    await tx.query(sql.unsafe`
      INSERT INTO learn_jobs (id, tenant_id, space_id, status, total) VALUES (${id}, ${opts.tenantId}, ${space_id ?? null}, 'queued', ${sources.length})
      ON CONFLICT (id) DO NOTHING`);
    const rows = sources.map((s, idx) => {
      if ('url' in s) return [id, idx, opts.tenantId, 'url', s.url, null, null, null];
      if ('text' in s) return [id, idx, opts.tenantId, 'text', null, s.title ?? null, s.text, null];
      return [id, idx, opts.tenantId, 'document', null, null, null, s.document_id];
    });
    await tx.query(sql.unsafe`
      INSERT INTO learn_sources (job_id, idx, tenant_id, kind, url, title, text, source_document_id)
      SELECT * FROM ${sql.unnest(rows, ['text', 'int4', 'text', 'text', 'text', 'text', 'text', 'text'])}
      ON CONFLICT DO NOTHING`);
  });
  return { id, total: sources.length };
}

/** The job as the poll endpoint shows it, or null when not the tenant's. */
export async function getLearnJob(db: Db, tenantId: string, jobId: string): Promise<LearnJobState | null> {
  const job = await db.maybeOne(sql.type(JobRow)`
    SELECT id, status, space_id, total, error, created_at, started_at, finished_at FROM learn_jobs
    WHERE tenant_id = ${tenantId} AND id = ${jobId}`);
  if (!job) return null;
  const sources = await db.any(sql.type(SourceRow)`
    SELECT idx, kind, url, title, source_document_id, status, error, document_id, chunks FROM learn_sources
    WHERE tenant_id = ${tenantId} AND job_id = ${jobId} ORDER BY idx`);
  return {
    job_id: job.id,
    status: job.status,
    progress: {
      done: sources.filter((s) => s.status === 'completed' || s.status === 'failed').length,
      total: job.total,
    },
    space_id: job.space_id,
    sources: sources.map((s) => ({
      index: s.idx,
      kind: s.kind,
      ...(s.url ? { url: s.url } : {}),
      ...(s.title ? { title: s.title } : {}),
      ...(s.source_document_id ? { document_id: s.source_document_id } : {}),
      status: s.status,
      ...(s.error ? { error: s.error } : {}),
      ...(s.document_id ? { learned_document_id: s.document_id } : {}),
      ...(s.chunks !== null ? { chunks: s.chunks } : {}),
    })),
    ...(job.error ? { error: job.error } : {}),
    created_at: job.created_at,
    started_at: job.started_at,
    finished_at: job.finished_at,
  };
}

/** What one source asks for, with the job's space. */
export async function getSourceSpec(db: Db, tenantId: string, jobId: string, idx: number): Promise<SourceSpec | null> {
  return db.maybeOne(sql.type(SourceSpec)`
    SELECT s.kind, s.url, s.title, s.text, s.source_document_id, s.status, j.space_id
    FROM learn_sources s JOIN learn_jobs j ON j.id = s.job_id AND j.tenant_id = ${tenantId}
    WHERE s.tenant_id = ${tenantId} AND s.job_id = ${jobId} AND s.idx = ${idx}`);
}

export async function setJobRunning(db: Db, tenantId: string, jobId: string): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE learn_jobs SET status = 'running', started_at = coalesce(started_at, now())
    WHERE tenant_id = ${tenantId} AND id = ${jobId} AND status IN ('queued', 'running')`);
}

/** Records a source's progress; a finished source (completed/failed/cancelled) is never reopened. */
export async function setSourceState(
  db: Db,
  s: {
    tenantId: string;
    jobId: string;
    idx: number;
    status: 'running' | 'completed' | 'failed';
    error?: string;
    documentId?: string;
    chunks?: number;
  },
): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE learn_sources SET status = ${s.status}, error = ${s.error?.slice(0, 500) ?? null},
      document_id = coalesce(${s.documentId ?? null}, document_id), chunks = coalesce(${s.chunks ?? null}::int, chunks), updated_at = now()
    WHERE tenant_id = ${s.tenantId} AND job_id = ${s.jobId} AND idx = ${s.idx} AND status IN ('pending', 'running')`);
  return r.rowCount > 0;
}

/**
 * Closes the job: `cancelled` when asked, else `completed` when at least one source was learned,
 * `failed` when none was. Sources still open become `cancelled`. @returns the final status
 */
export async function finishLearnJob(
  db: Db,
  tenantId: string,
  jobId: string,
  opts: { cancelled?: boolean } = {},
): Promise<LearnStatus> {
  return db.transaction(async (tx) => {
    await tx.query(sql.unsafe`
      UPDATE learn_sources SET status = 'cancelled', updated_at = now()
      WHERE tenant_id = ${tenantId} AND job_id = ${jobId} AND status IN ('pending', 'running')`);
    const ok = await tx.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM learn_sources WHERE tenant_id = ${tenantId} AND job_id = ${jobId} AND status = 'completed'`);
    const status: LearnStatus = opts.cancelled ? 'cancelled' : ok > 0 ? 'completed' : 'failed';
    const error = status === 'failed' ? 'No source could be learned; see each source for its error.' : null;
    const row = await tx.maybeOne(sql.type(z.object({ status: JobRow.shape.status }))`
      UPDATE learn_jobs SET status = ${status}, error = ${error}, finished_at = now()
      WHERE tenant_id = ${tenantId} AND id = ${jobId} AND finished_at IS NULL RETURNING status`);
    if (row) return row.status;
    return tx.oneFirst(sql.type(z.object({ status: JobRow.shape.status }))`
      SELECT status FROM learn_jobs WHERE tenant_id = ${tenantId} AND id = ${jobId}`);
  });
}
