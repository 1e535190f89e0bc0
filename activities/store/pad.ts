import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { PadAgent } from '../../schema/jobs';
import type { PadAgentInput } from '../../workflows/job-types';

export const PadSessionRow = z.object({
  id: z.string(),
  status: z.enum(['running', 'completed', 'cancelled']),
  max_concurrency: z.number(),
  agent_count: z.number(),
  created_at: z.string(),
  finished_at: z.string().nullable(),
});
/** The response agent, keyed by session and position (`idx`) instead of `index`. */
export const PadAgentRow = PadAgent.omit({ index: true }).extend({ session_id: z.string(), idx: z.number() });
export type PadAgentRow = z.infer<typeof PadAgentRow>;

export async function insertPadSession(
  db: CommonQueryMethods,
  s: { id: string; tenantId: string; maxConcurrency: number; agents: PadAgentInput[] },
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(sql.unsafe`
      INSERT INTO pad_sessions (id, tenant_id, status, max_concurrency, agent_count)
      VALUES (${s.id}, ${s.tenantId}, 'running', ${s.maxConcurrency}, ${s.agents.length})
      ON CONFLICT (id) DO NOTHING`);
    await tx.query(sql.unsafe`
      INSERT INTO pad_agents (session_id, idx, tenant_id, name, prompt, lane, surface, status)
      SELECT ${s.id}, a.idx, ${s.tenantId}, a.name, a.prompt, a.lane, a.surface, 'queued'
      FROM ${sql.unnest(
        s.agents.map((a) => [a.index, a.name, a.prompt, a.lane, a.surface]),
        ['int4', 'text', 'text', 'text', 'text'],
      )} AS a(idx, name, prompt, lane, surface)
      ON CONFLICT DO NOTHING`);
  });
}

/** One agent transition (the activity passes it on, adding the attempt). */
export interface PadAgentUpdate {
  tenantId: string;
  sessionId: string;
  index: number;
  status: PadAgentRow['status'];
  outputId?: string | null;
  error?: string | null;
  attempt?: number;
  durationMs?: number | null;
}

/** Records an agent transition; `attempts` only grows (a retried activity counts each attempt). */
export async function updatePadAgent(db: CommonQueryMethods, a: PadAgentUpdate): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE pad_agents SET status = ${a.status},
      output_id = coalesce(${a.outputId ?? null}, output_id),
      error = ${a.error ?? null},
      attempts = greatest(attempts, ${a.attempt ?? 0}),
      started_at = CASE WHEN ${a.status} = 'running' THEN coalesce(started_at, now()) ELSE started_at END,
      finished_at = CASE WHEN ${a.status} IN ('completed', 'failed', 'cancelled') THEN now() ELSE finished_at END,
      duration_ms = coalesce(${a.durationMs ?? null}, duration_ms)
    WHERE session_id = ${a.sessionId} AND idx = ${a.index} AND tenant_id = ${a.tenantId}`);
}

export async function finishPadSession(
  db: CommonQueryMethods,
  tenantId: string,
  sessionId: string,
  status: 'completed' | 'cancelled',
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(sql.unsafe`
      UPDATE pad_sessions SET status = ${status}, finished_at = coalesce(finished_at, now()) WHERE id = ${sessionId} AND tenant_id = ${tenantId}`);
    if (status === 'cancelled') {
      await tx.query(sql.unsafe`
        UPDATE pad_agents SET status = 'cancelled', finished_at = now()
        WHERE session_id = ${sessionId} AND tenant_id = ${tenantId} AND status IN ('queued', 'running')`);
    }
  });
}

export async function getPadSession(db: CommonQueryMethods, tenantId: string, id: string) {
  const session = await db.maybeOne(sql.type(PadSessionRow)`
    SELECT id, status, max_concurrency, agent_count, created_at, finished_at FROM pad_sessions
    WHERE id = ${id} AND tenant_id = ${tenantId}`);
  if (!session) return null;
  const agents = await db.any(sql.type(PadAgentRow)`
    SELECT a.session_id, a.idx, a.name, a.lane, a.surface, a.status, a.output_id, o.content AS output, a.error, a.attempts, a.duration_ms
    FROM pad_agents a LEFT JOIN job_outputs o ON o.id = a.output_id AND o.tenant_id = a.tenant_id
    WHERE a.session_id = ${id} AND a.tenant_id = ${tenantId} ORDER BY a.idx`);
  return { session, agents };
}

export async function listPadSessions(db: CommonQueryMethods, o: { tenantId: string; limit: number; offset: number }) {
  const rows = await db.any(sql.type(PadSessionRow)`
    SELECT id, status, max_concurrency, agent_count, created_at, finished_at FROM pad_sessions
    WHERE tenant_id = ${o.tenantId} ORDER BY created_at DESC, id DESC LIMIT ${o.limit} OFFSET ${o.offset}`);
  const total = await db.oneFirst(
    sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM pad_sessions WHERE tenant_id = ${o.tenantId}`,
  );
  return { rows, total };
}

/** Throughput figures over the newest `window` sessions of a tenant. */
export async function padStats(db: CommonQueryMethods, tenantId: string, window = 100) {
  return db.one(sql.type(
    z.object({
      sessions: z.number(),
      running: z.number(),
      completed: z.number(),
      cancelled: z.number(),
      agents: z.number(),
      agents_completed: z.number(),
      agents_failed: z.number(),
      p50: z.number().nullable(),
      p95: z.number().nullable(),
      span_s: z.number().nullable(),
    }),
  )`
    WITH recent AS (
      SELECT * FROM pad_sessions WHERE tenant_id = ${tenantId} ORDER BY created_at DESC, id DESC LIMIT ${window}
    ), ag AS (
      SELECT a.* FROM pad_agents a JOIN recent r ON r.id = a.session_id WHERE a.tenant_id = ${tenantId}
    )
    SELECT
      (SELECT count(*) FROM recent)::int AS sessions,
      (SELECT count(*) FROM recent WHERE status = 'running')::int AS running,
      (SELECT count(*) FROM recent WHERE status = 'completed')::int AS completed,
      (SELECT count(*) FROM recent WHERE status = 'cancelled')::int AS cancelled,
      (SELECT count(*) FROM ag)::int AS agents,
      (SELECT count(*) FROM ag WHERE status = 'completed')::int AS agents_completed,
      (SELECT count(*) FROM ag WHERE status = 'failed')::int AS agents_failed,
      (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) FROM ag WHERE duration_ms IS NOT NULL)::float8 AS p50,
      (SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) FROM ag WHERE duration_ms IS NOT NULL)::float8 AS p95,
      (SELECT extract(epoch FROM max(finished_at) - min(started_at)) FROM ag WHERE status IN ('completed', 'failed'))::float8 AS span_s`);
}

/** Removes a session whose workflow never started (its agents go with it). */
export async function deletePadSession(db: CommonQueryMethods, tenantId: string, id: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM pad_sessions WHERE id = ${id} AND tenant_id = ${tenantId}`);
}
