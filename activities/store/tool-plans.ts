import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { PLAN_RUN_STATUSES, ToolPlan, type PlanRunStatus } from '../../schema/tools-plans';
import { streams } from '../../schema/workflow-ids';
import { eventInsertFrom } from './events';
import { newId } from './ids';

const PlanRow = z.object({ plan: ToolPlan });

/** Stores a compiled plan for the tenant; a plan whose (derived) id already exists is kept and returned. */
export async function insertPlan(
  db: CommonQueryMethods,
  o: { id?: string; tenantId: string; keyId: string; plan: Omit<ToolPlan, 'id' | 'created_at' | 'object'> },
): Promise<ToolPlan> {
  const id = o.id ?? newId('tpl');
  const plan = { id, object: 'tool.plan' as const, ...o.plan, created_at: new Date().toISOString() };
  const r = await db.query(sql.unsafe`
    INSERT INTO tool_plans (id, tenant_id, key_id, goal, source, plan)
    VALUES (${id}, ${o.tenantId}, ${o.keyId}, ${plan.goal}, ${plan.source}, ${sql.jsonb(plan as never)})
    ON CONFLICT (id) DO NOTHING`);
  if (r.rowCount > 0) return plan;
  const stored = await getPlan(db, o.tenantId, id);
  if (!stored) throw new Error(`Plan id ${id} is taken by another tenant.`);
  return stored;
}

export async function getPlan(db: CommonQueryMethods, tenantId: string, id: string): Promise<ToolPlan | null> {
  const row = await db.maybeOne(
    sql.type(PlanRow)`SELECT plan FROM tool_plans WHERE tenant_id = ${tenantId} AND id = ${id}`,
  );
  return row?.plan ?? null;
}

export const RunRow = z.object({
  id: z.string(),
  tenant_id: z.string(),
  plan_id: z.string(),
  key_id: z.string(),
  scopes: z.array(z.string()),
  surface: z.string().nullable(),
  status: z.enum(PLAN_RUN_STATUSES),
  approved: z.array(z.string()),
  awaiting: z.array(z.string()),
  created_at: z.string(),
  finished_at: z.string().nullable(),
});
export type RunRow = z.infer<typeof RunRow>;

/** A run with the key's id and scopes at start: its steps run with exactly those rights. */
export async function insertRun(
  db: CommonQueryMethods,
  o: {
    /** Derived from an Idempotency-Key: a retry after a crash finds the run (and its workflow) again. */
    id?: string;
    tenantId: string;
    planId: string;
    keyId: string;
    scopes: string[];
    surface?: string;
    status: PlanRunStatus;
    approved: string[];
  },
): Promise<RunRow> {
  const id = o.id ?? newId('tpr');
  const row = await db.maybeOne(sql.type(RunRow)`
    INSERT INTO tool_plan_runs (id, tenant_id, plan_id, key_id, scopes, surface, status, approved, finished_at)
    VALUES (${id}, ${o.tenantId}, ${o.planId}, ${o.keyId}, ${sql.array(o.scopes, 'text')}, ${o.surface ?? null},
            ${o.status}, ${sql.array(o.approved, 'text')}, ${o.status === 'dry_run' ? sql.fragment`now()` : null})
    ON CONFLICT (id) DO NOTHING
    RETURNING *`);
  return row ?? db.one(sql.type(RunRow)`SELECT * FROM tool_plan_runs WHERE tenant_id = ${o.tenantId} AND id = ${id}`);
}

export async function getRun(db: CommonQueryMethods, tenantId: string, id: string): Promise<RunRow | null> {
  return db.maybeOne(sql.type(RunRow)`SELECT * FROM tool_plan_runs WHERE tenant_id = ${tenantId} AND id = ${id}`);
}

export async function deleteRun(db: CommonQueryMethods, tenantId: string, id: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM tool_plan_runs WHERE tenant_id = ${tenantId} AND id = ${id}`);
}

/** Adds approvals (kept once each). */
export async function addApprovals(db: CommonQueryMethods, tenantId: string, id: string, steps: string[]) {
  await db.query(sql.unsafe`
    UPDATE tool_plan_runs SET approved = ARRAY(SELECT DISTINCT unnest(approved || ${sql.array(steps, 'text')}::text[]))
    WHERE tenant_id = ${tenantId} AND id = ${id}`);
}

/**
 * Sets the run's status (and the gated steps it waits for) with its event in one statement; a
 * finished run is never changed again. `done` events end SSE streams.
 */
export async function setRunStatus(
  db: CommonQueryMethods,
  o: { tenantId: string; runId: string; status: PlanRunStatus; awaiting: string[] },
): Promise<void> {
  const final = ['completed', 'failed', 'cancelled'].includes(o.status);
  await db.query(sql.unsafe`
    WITH upd AS (
      UPDATE tool_plan_runs SET status = ${o.status}, awaiting = ${sql.array(o.awaiting, 'text')},
        finished_at = ${final ? sql.fragment`now()` : null}
      WHERE tenant_id = ${o.tenantId} AND id = ${o.runId} AND finished_at IS NULL
      RETURNING id
    ), ev AS (${eventInsertFrom(sql.fragment`upd`, {
      tenantId: o.tenantId,
      stream: streams.plan(o.runId),
      type: final ? 'done' : 'status',
      data: { run_id: o.runId, status: o.status, awaiting: o.awaiting, ...(final ? { done: true } : {}) },
    })})
    SELECT count(*) FROM ev`);
}

const ResultRow = z.object({
  step_id: z.string(),
  status: z.enum(['completed', 'failed', 'skipped', 'cancelled']),
  result: z.unknown(),
  error: z.string().nullable(),
});
export type ResultRow = z.infer<typeof ResultRow>;

export async function resultsOf(
  db: CommonQueryMethods,
  tenantId: string,
  runId: string,
): Promise<readonly ResultRow[]> {
  return db.any(sql.type(ResultRow)`
    SELECT step_id, status, result, error FROM tool_plan_results WHERE tenant_id = ${tenantId} AND run_id = ${runId}`);
}

export async function findResult(db: CommonQueryMethods, tenantId: string, runId: string, stepId: string) {
  return db.maybeOne(sql.type(ResultRow)`
    SELECT step_id, status, result, error FROM tool_plan_results
    WHERE tenant_id = ${tenantId} AND run_id = ${runId} AND step_id = ${stepId}`);
}

const StepRead = RunRow.extend({ plan: ToolPlan, results: z.array(ResultRow) });

/**
 * What a plan step needs, in one round: the run (key rights), its plan and every stored result (the
 * step's own, if a retry finds it, and the completed ones its references read). Null when the run or
 * its plan is gone.
 */
export async function stepInputs(
  db: CommonQueryMethods,
  tenantId: string,
  runId: string,
): Promise<{ run: RunRow; plan: ToolPlan; results: ResultRow[] } | null> {
  const row = await db.maybeOne(sql.type(StepRead)`
    SELECT r.*, p.plan,
      coalesce((SELECT json_agg(json_build_object('step_id', x.step_id, 'status', x.status, 'result', x.result, 'error', x.error))
                FROM tool_plan_results x WHERE x.tenant_id = r.tenant_id AND x.run_id = r.id), '[]'::json) AS results
    FROM tool_plan_runs r JOIN tool_plans p ON p.tenant_id = r.tenant_id AND p.id = r.plan_id
    WHERE r.tenant_id = ${tenantId} AND r.id = ${runId}`);
  if (!row) return null;
  const { plan, results, ...run } = row;
  return { run, plan, results };
}

/**
 * Stores a step's outcome once, with its `step` event in the same statement; a duplicate (a retried
 * activity whose first attempt already stored it) keeps the first row, writes no second event and
 * gets the stored row back.
 */
export async function saveResult(
  db: CommonQueryMethods,
  o: { tenantId: string; runId: string; stepId: string; status: ResultRow['status']; result?: unknown; error?: string },
): Promise<ResultRow> {
  const inserted = await db.oneFirst(sql.type(z.object({ inserted: z.number() }))`
    WITH ins AS (
      INSERT INTO tool_plan_results (tenant_id, run_id, step_id, status, result, error)
      VALUES (${o.tenantId}, ${o.runId}, ${o.stepId}, ${o.status}, ${o.result === undefined ? null : sql.jsonb(o.result as never)}, ${o.error ?? null})
      ON CONFLICT (run_id, step_id) DO NOTHING
      RETURNING step_id
    ), ev AS (${eventInsertFrom(sql.fragment`ins`, {
      tenantId: o.tenantId,
      stream: streams.plan(o.runId),
      type: 'step',
      data: { run_id: o.runId, step_id: o.stepId, status: o.status, ...(o.error ? { error: o.error } : {}) },
    })})
    SELECT (SELECT count(*) FROM ins)::int AS inserted`); // ev runs too: a data-modifying CTE always runs once
  // Inserted: the row is what was given (no second read). A duplicate reads the first one.
  if (inserted) return { step_id: o.stepId, status: o.status, result: o.result ?? null, error: o.error ?? null };
  return (await findResult(db, o.tenantId, o.runId, o.stepId))!;
}
