import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { GoalSnapshot, GoalState } from '../../workflows/job-types';
import { EVENTS_CHANNEL } from './events';

export const GoalRow = z.object({
  id: z.string(),
  tenant_id: z.string(),
  kind: z.enum(['goal', 'sovereign']),
  title: z.string(),
  description: z.string().nullable(),
  lane: z.string(),
  status: z.string(),
  plan: z.array(z.any()),
  step_index: z.number(),
  last_step: z.any().nullable(),
  result: z.string().nullable(),
  error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type GoalRow = z.infer<typeof GoalRow>;

/** A goal row's `updated_at` as its readers see it (ISO text, see the timestamptz parser in db.ts). */
const UpdatedAt = z.object({ updated_at: z.string().nullable() });
const SavedWithEvents = UpdatedAt.extend({ events: z.number() });
const GoalStatusRow = z.object({ status: z.string() });

const COLS = sql.fragment`id, tenant_id, kind, title, description, lane, status, plan, step_index, last_step, result, error, created_at, updated_at`;

export async function insertGoal(
  db: CommonQueryMethods,
  g: Pick<GoalState, 'tenantId' | 'kind' | 'title' | 'description' | 'lane' | 'status' | 'plan'> & { id: string },
): Promise<GoalRow> {
  // An id derived from an Idempotency-Key may already exist (a retry after a crash): keep that row.
  const row = await db.maybeOne(sql.type(GoalRow)`
    INSERT INTO goals (id, tenant_id, kind, title, description, lane, status, plan)
    VALUES (${g.id}, ${g.tenantId}, ${g.kind}, ${g.title}, ${g.description}, ${g.lane}, ${g.status}, ${sql.jsonb(g.plan as never)})
    ON CONFLICT (id) DO NOTHING
    RETURNING ${COLS}`);
  return (
    row ??
    db.one(
      sql.type(
        GoalRow,
      )`SELECT ${COLS} FROM goals WHERE id = ${g.id} AND tenant_id = ${g.tenantId} AND kind = ${g.kind}`,
    )
  );
}

/**
 * Writes a workflow's snapshot: goal fields, plus the whole plan or only the changed steps
 * (patched in place by index). Only rows that still exist are updated (a deleted goal stays deleted).
 * ONE statement (the changed steps are nested `jsonb_set`s), with the `events` of one stream that
 * go with it, appended in order: a tick's snapshot was BEGIN, two UPDATEs, COMMIT and then its
 * event, five round trips.
 * @returns the row's new `updated_at` (as a read of the row gives it), or null when the row is gone
 */
export async function saveGoalState(
  db: CommonQueryMethods,
  s: GoalSnapshot,
  events?: { stream: string; items: Array<{ type: string; data: unknown }> },
): Promise<string | null> {
  const plan = s.plan
    ? sql.jsonb(s.plan as never)
    : (s.steps ?? []).reduce(
        (expr, step) =>
          sql.fragment`jsonb_set(${expr}, ${sql.array([String(step.index)], 'text')}, ${sql.jsonb(step as never)})`,
        sql.fragment`plan`,
      );
  const update = sql.fragment`
    UPDATE goals SET status = ${s.status}, title = ${s.title}, description = ${s.description},
      plan = ${plan},
      step_index = ${s.stepIndex},
      last_step = ${s.lastStep ? sql.jsonb(s.lastStep as never) : null},
      result = ${s.resultOutputId}, error = ${s.error}, updated_at = now()
    WHERE id = ${s.goalId} AND tenant_id = ${s.tenantId}`;
  // Prepared (one name per text: a snapshot's text depends on how many steps it patches).
  if (!events?.items.length)
    return db.maybeOneFirst(sql.prepared('goal_save', UpdatedAt)`${update} RETURNING updated_at`);
  const rows = events.items.map((e, n) => [n, e.type, JSON.stringify(e.data)]);
  const saved = await db.one(sql.prepared('goal_save_events', SavedWithEvents)`
    WITH g AS (${update} RETURNING updated_at),
    ev AS (
      INSERT INTO events (tenant_id, stream, type, data)
      SELECT ${s.tenantId}, ${events.stream}, x.type, x.data::jsonb
      FROM ${sql.unnest(rows, ['int4', 'text', 'text'])} AS x(n, type, data),
        -- The stream's lock before the ids are drawn, as in eventInsertFrom.
        LATERAL (SELECT pg_advisory_xact_lock(hashtextextended(${events.stream}, 7426)) WHERE x.n >= 0) AS stream_lock
      ORDER BY x.n
      RETURNING id, pg_notify(${EVENTS_CHANNEL}, json_build_object('stream', stream, 'id', id)::text) IS NULL AS notified)
    SELECT (SELECT updated_at FROM g) AS updated_at, (SELECT count(*) FROM ev)::int AS events`);
  return saved.updated_at;
}

export async function getGoalRow(
  db: CommonQueryMethods,
  tenantId: string,
  kind: 'goal' | 'sovereign',
  id: string,
): Promise<GoalRow | null> {
  return db.maybeOne(
    sql.prepared(
      'goal_row',
      GoalRow,
    )`SELECT ${COLS} FROM goals WHERE id = ${id} AND tenant_id = ${tenantId} AND kind = ${kind}`,
  );
}

/** A goal's status only (no plan): the cheap tenant and state check before a tick. Null when not the tenant's. */
export async function goalStatus(
  db: CommonQueryMethods,
  tenantId: string,
  kind: 'goal' | 'sovereign',
  id: string,
): Promise<string | null> {
  return db.maybeOneFirst(sql.prepared('goal_status', GoalStatusRow)`
    SELECT status FROM goals WHERE id = ${id} AND tenant_id = ${tenantId} AND kind = ${kind}`);
}

const GoalWithOutputs = GoalRow.extend({ outputs: z.record(z.string(), z.string()).nullable() });

/** The full texts (id -> content) of the outputs the plan of the goal row `g` names, and of `also`. */
const planOutputs = (also: string | null) => sql.fragment`(
  SELECT jsonb_object_agg(o.id, o.content) FROM job_outputs o
  WHERE o.tenant_id = g.tenant_id
    AND o.id = ANY(ARRAY(SELECT p->>'outputId' FROM jsonb_array_elements(g.plan) p WHERE p->>'outputId' IS NOT NULL) || ${also}::text))`;

/** The goal row with the outputs `outputs` (a subquery over the goal row `g`) selects, in one statement. */
async function goalRowWith(
  db: CommonQueryMethods,
  tenantId: string,
  kind: 'goal' | 'sovereign',
  id: string,
  outputs: ReturnType<typeof sql.fragment>,
): Promise<{ row: GoalRow; outputs: Map<string, string> } | null> {
  const r = await db.maybeOne(sql.prepared('goal_with_outputs', GoalWithOutputs)`
    SELECT ${COLS}, ${outputs} AS outputs
    FROM goals g WHERE id = ${id} AND tenant_id = ${tenantId} AND kind = ${kind}`);
  if (!r) return null;
  const { outputs: texts, ...row } = r;
  return { row, outputs: new Map(Object.entries(texts ?? {})) };
}

/**
 * The goal row with the full texts of its plan's outputs (and of `alsoOutput`), in one statement
 * instead of two: what a goal's answer shows. Tenant-filtered, outputs too (found by primary key,
 * not by scanning the tenant's outputs).
 */
export function getGoalWithOutputs(
  db: CommonQueryMethods,
  tenantId: string,
  kind: 'goal' | 'sovereign',
  id: string,
  alsoOutput?: string | null,
): Promise<{ row: GoalRow; outputs: Map<string, string> } | null> {
  return goalRowWith(db, tenantId, kind, id, planOutputs(alsoOutput ?? null));
}

/**
 * The goal row and the full texts of `outputIds` (tenant-filtered): after a tick, the outputs the
 * caller does not have yet (the earlier ones never change, so they can be read before).
 */
export function getGoalWithSomeOutputs(
  db: CommonQueryMethods,
  tenantId: string,
  kind: 'goal' | 'sovereign',
  id: string,
  outputIds: string[],
): Promise<{ row: GoalRow; outputs: Map<string, string> } | null> {
  return goalRowWith(
    db,
    tenantId,
    kind,
    id,
    sql.fragment`(SELECT jsonb_object_agg(o.id, o.content) FROM job_outputs o
      WHERE o.tenant_id = g.tenant_id AND o.id = ANY(${sql.array(outputIds, 'text')}))`,
  );
}

/** The full texts of the outputs a goal's plan names (tenant-filtered); empty when the goal is not the tenant's. */
export async function goalPlanOutputs(
  db: CommonQueryMethods,
  tenantId: string,
  kind: 'goal' | 'sovereign',
  id: string,
): Promise<Map<string, string>> {
  const outputs = await db.maybeOneFirst(sql.type(z.object({ outputs: z.record(z.string(), z.string()).nullable() }))`
    SELECT ${planOutputs(null)} AS outputs FROM goals g WHERE id = ${id} AND tenant_id = ${tenantId} AND kind = ${kind}`);
  return new Map(Object.entries(outputs ?? {}));
}

export async function listGoalRows(
  db: CommonQueryMethods,
  o: { tenantId: string; kind: 'goal' | 'sovereign'; limit: number; offset: number },
): Promise<{ rows: readonly GoalRow[]; total: number }> {
  const rows = await db.any(sql.type(GoalRow)`
    SELECT ${COLS} FROM goals WHERE tenant_id = ${o.tenantId} AND kind = ${o.kind}
    ORDER BY created_at DESC, id DESC LIMIT ${o.limit} OFFSET ${o.offset}`);
  const total = await db.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM goals WHERE tenant_id = ${o.tenantId} AND kind = ${o.kind}`);
  return { rows, total };
}

export async function updateGoalText(
  db: CommonQueryMethods,
  tenantId: string,
  id: string,
  patch: { title?: string; description?: string },
): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE goals SET title = coalesce(${patch.title ?? null}, title),
      description = coalesce(${patch.description ?? null}, description), updated_at = now()
    WHERE id = ${id} AND tenant_id = ${tenantId}`);
}

export async function deleteGoalRow(db: CommonQueryMethods, tenantId: string, id: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM goals WHERE id = ${id} AND tenant_id = ${tenantId}`);
}
