import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { AppError, invalid, notFound, type ErrorDetail } from '../../schema/errors';
import { checkGraph } from '../../schema/task-graph';
import {
  Step,
  Task,
  taskPatchAllowed,
  taskStream,
  type StepCreateBody,
  type TaskCreateBody,
  type TaskPatchBody,
  type TaskStatus,
} from '../../schema/tasks';
import type { Db } from './db';
import { appendEvent } from './events';
import { newId } from './ids';

// Rows are the response shapes plus the run bookkeeping that is never returned (see toTask/toStep).
export const TaskRow = Task.omit({ steps: true }).extend({
  run_id: z.string().nullable(),
  run_event_floor: z.number().int(),
});
export type TaskRow = z.infer<typeof TaskRow>;

export const StepRow = Step.extend({ run_id: z.string().nullable() });
export type StepRow = z.infer<typeof StepRow>;

export const TASK_COLS = sql.fragment`id, title, description, surface, session_id, priority, metadata, status, run_id, run_event_floor, created_at, updated_at`;
const STEP_COLUMNS = [
  'id',
  'task_id',
  'title',
  'action',
  'args',
  'depends_on',
  'order_num',
  'status',
  'result',
  'error',
  'attempts',
  'run_id',
  'started_at',
  'finished_at',
] as const;
export const STEP_COLS = sql.join(
  STEP_COLUMNS.map((c) => sql.identifier([c])),
  sql.fragment`, `,
);
/** STEP_COLS of the step row aliased `alias` (statements that join tables with their own `id`). */
export const stepColsOf = (alias: string) =>
  sql.join(
    STEP_COLUMNS.map((c) => sql.identifier([alias, c])),
    sql.fragment`, `,
  );

/** Arg keys whose values are secrets (webhook signing key): stored for the worker, never returned. */
export const SECRET_ARGS: ReadonlySet<string> = new Set(['secret']);

export function toStep(r: StepRow): Step {
  const { run_id: _r, ...rest } = r;
  const args = Object.fromEntries(Object.entries(r.args).map(([k, v]) => [k, SECRET_ARGS.has(k) ? '[redacted]' : v]));
  return { ...rest, args };
}
export function toTask(r: TaskRow, steps: readonly StepRow[]): Task {
  const { run_id: _r, run_event_floor: _f, ...rest } = r;
  return { ...rest, steps: steps.map(toStep) };
}

export async function stepsOf(
  db: CommonQueryMethods,
  tenantId: string,
  taskIds: readonly string[],
): Promise<readonly StepRow[]> {
  if (!taskIds.length) return [];
  return db.any(sql.prepared('task_steps_of', StepRow)`
    SELECT ${STEP_COLS} FROM task_steps
    WHERE tenant_id = ${tenantId} AND task_id = ANY(${sql.array(taskIds, 'text')})
    ORDER BY task_id, order_num, created_at, id`);
}

/** The task row (no steps); `lock` takes a row lock inside a transaction. */
export async function taskRow(
  db: CommonQueryMethods,
  tenantId: string,
  taskId: string,
  lock = false,
): Promise<TaskRow | null> {
  return db.maybeOne(sql.prepared('task_row', TaskRow)`
    SELECT ${TASK_COLS} FROM tasks WHERE id = ${taskId} AND tenant_id = ${tenantId}
    ${lock ? sql.fragment`FOR UPDATE` : sql.fragment``}`);
}

/** The task with its steps, or null (unknown or another tenant's). */
export async function getTask(db: CommonQueryMethods, tenantId: string, taskId: string): Promise<Task | null> {
  const row = await taskRow(db, tenantId, taskId);
  return row ? toTask(row, await stepsOf(db, tenantId, [taskId])) : null;
}

/** Turns graph problems into 400 details with body paths (`body.steps.2.depends_on`). */
export function graphError(problems: ReturnType<typeof checkGraph>, pathOf: (index: number) => string): AppError {
  const details: ErrorDetail[] = problems.map((p) => ({
    path: p.index < 0 ? 'body.steps' : `${pathOf(p.index)}.${p.field}`,
    message: p.message,
  }));
  return invalid(details, 'steps');
}

/** The INSERT of `steps` (one statement, any number of rows), written only when `onlyIf` (SQL) holds. */
function stepsInsert(
  opts: { tenantId: string; taskId: string; steps: ReadonlyArray<StepCreateBody & { id: string }>; firstOrder: number },
  onlyIf = sql.fragment`true`,
) {
  const rows = opts.steps.map((s, i) => ({
    id: s.id,
    title: s.title,
    action: s.action,
    args: s.args ?? {},
    deps: [...new Set(s.depends_on ?? [])],
    ord: s.order_num ?? opts.firstOrder + i,
  }));
  return sql.fragment`
    INSERT INTO task_steps (task_id, id, tenant_id, title, action, args, depends_on, order_num)
    SELECT ${opts.taskId}, x.id, ${opts.tenantId}, x.title, x.action, x.args, ARRAY(SELECT jsonb_array_elements_text(x.deps)), x.ord
    FROM jsonb_to_recordset(${sql.jsonb(rows)}) AS x(id text, title text, action text, args jsonb, deps jsonb, ord int)
    WHERE ${onlyIf}`;
}

export async function insertSteps(
  tx: CommonQueryMethods,
  opts: { tenantId: string; taskId: string; steps: ReadonlyArray<StepCreateBody & { id: string }>; firstOrder: number },
): Promise<void> {
  if (opts.steps.length) await tx.query(sql.unsafe`${stepsInsert(opts)}`);
}

const CreatedTask = TaskRow.extend({ steps: z.array(StepRow) });

/**
 * Creates a task with its inline steps in ONE statement (one implicit transaction).
 * @throws AppError invalid_request for unknown dependencies, duplicate step ids, bad references or a cycle
 */
export async function createTask(db: Db, opts: { tenantId: string; body: TaskCreateBody; id?: string }): Promise<Task> {
  const b = opts.body;
  const steps = (b.steps ?? []).map((s) => ({ ...s, id: s.id ?? newId('stp') }));
  const problems = checkGraph(steps.map((s) => ({ id: s.id, depends_on: s.depends_on ?? [], args: s.args })));
  if (problems.length) throw graphError(problems, (i) => `body.steps.${i}`);
  const id = opts.id ?? newId('tsk');
  // Step timestamps come back as JSON text: the same ISO form the row parser gives.
  const row = await db.one(sql.prepared('task_create', CreatedTask)`
    WITH t AS (
      INSERT INTO tasks (id, tenant_id, title, description, surface, session_id, priority, metadata)
      VALUES (${id}, ${opts.tenantId}, ${b.title}, ${b.description ?? null}, ${b.surface ?? null},
              ${b.session_id ?? null}, ${b.priority ?? 0}, ${sql.jsonb(b.metadata ?? {})})
      RETURNING ${TASK_COLS}),
    s AS (${stepsInsert({ tenantId: opts.tenantId, taskId: id, steps, firstOrder: 0 }, sql.fragment`EXISTS (SELECT 1 FROM t)`)}
      RETURNING ${STEP_COLS})
    SELECT t.*, coalesce((SELECT json_agg(s ORDER BY s.order_num, s.id) FROM s), '[]') AS steps FROM t`);
  const { steps: rows, ...task } = row;
  return toTask(task, rows);
}

/** A page of tasks (newest first) with their steps and the total matching count. */
export async function listTasks(
  db: Db,
  opts: { tenantId: string; status?: TaskStatus; surface?: string; sessionId?: string; limit: number; offset: number },
): Promise<{ data: Task[]; total: number }> {
  const conds = [sql.fragment`tenant_id = ${opts.tenantId}`];
  if (opts.status) conds.push(sql.fragment`status = ${opts.status}`);
  if (opts.surface) conds.push(sql.fragment`surface = ${opts.surface}`);
  if (opts.sessionId) conds.push(sql.fragment`session_id = ${opts.sessionId}`);
  const where = sql.join(conds, sql.fragment` AND `);
  const rows = await db.any(sql.type(TaskRow)`
    SELECT ${TASK_COLS} FROM tasks WHERE ${where}
    ORDER BY created_at DESC, id DESC LIMIT ${opts.limit} OFFSET ${opts.offset}`);
  const total = await db.oneFirst(
    sql.type(z.object({ n: z.number().int() }))`SELECT count(*)::int8 AS n FROM tasks WHERE ${where}`,
  );
  const steps = await stepsOf(
    db,
    opts.tenantId,
    rows.map((r) => r.id),
  );
  return {
    data: rows.map((r) =>
      toTask(
        r,
        steps.filter((s) => s.task_id === r.id),
      ),
    ),
    total,
  };
}

/** Appends the final `done` event of a run (or of a deletion, with `task: null`). */
export async function appendDone(
  tx: CommonQueryMethods,
  tenantId: string,
  taskId: string,
  status: string,
  task: Task | null,
): Promise<number> {
  return appendEvent(tx, {
    tenantId,
    stream: taskStream(taskId),
    type: 'done',
    data: { done: true, task_id: taskId, status, task },
  });
}

/**
 * Updates fields and applies a client transition (see TASK_PATCH_TRANSITIONS):
 * to `cancelled` stops open steps and ends the stream; reopening to `pending` resets every step.
 * @returns the updated task and the status it had (the caller cancels a running workflow)
 * @throws AppError not_found, conflict (illegal transition)
 */
export async function patchTask(
  db: Db,
  opts: { tenantId: string; taskId: string; patch: TaskPatchBody },
): Promise<{ task: Task; previous: TaskStatus }> {
  const p = opts.patch;
  const previous = await db.transaction(async (tx) => {
    const row = await taskRow(tx, opts.tenantId, opts.taskId, true);
    if (!row) throw notFound('Task');
    const to = p.status ?? row.status;
    if (!taskPatchAllowed(row.status, to)) {
      throw new AppError(
        'conflict',
        `Task status cannot change from ${row.status} to ${to}${to === 'running' ? ' (use POST /v1/tasks/{id}/execute)' : ''}.`,
      );
    }
    await tx.query(sql.unsafe`
      UPDATE tasks SET
        title = ${p.title ?? row.title},
        description = ${p.description === undefined ? row.description : p.description},
        priority = ${p.priority ?? row.priority},
        surface = ${p.surface === undefined ? row.surface : p.surface},
        session_id = ${p.session_id === undefined ? row.session_id : p.session_id},
        metadata = ${sql.jsonb(p.metadata ?? row.metadata)},
        status = ${to},
        run_id = ${to === row.status ? row.run_id : null},
        updated_at = now()
      WHERE id = ${opts.taskId} AND tenant_id = ${opts.tenantId}`);
    if (to !== row.status && to === 'cancelled') {
      await tx.query(sql.unsafe`
        UPDATE task_steps SET status = 'cancelled', finished_at = coalesce(finished_at, now())
        WHERE task_id = ${opts.taskId} AND tenant_id = ${opts.tenantId} AND status IN ('pending', 'running')`);
      if (row.status === 'running') {
        await appendDone(tx, opts.tenantId, opts.taskId, 'cancelled', await getTask(tx, opts.tenantId, opts.taskId));
      }
    }
    if (to !== row.status && to === 'pending') {
      await tx.query(sql.unsafe`
        UPDATE task_steps SET status = 'pending', result = NULL, error = NULL, attempts = 0, run_id = NULL,
          started_at = NULL, finished_at = NULL
        WHERE task_id = ${opts.taskId} AND tenant_id = ${opts.tenantId}`);
    }
    return row.status;
  });
  return { task: (await getTask(db, opts.tenantId, opts.taskId)) as Task, previous };
}

/**
 * Deletes a task and its steps. A run in progress gets a final `done` event (task null) so
 * attached streams end; the caller cancels its workflow.
 * @returns the deleted row's status, or null when there was no such task
 */
export async function deleteTask(db: Db, opts: { tenantId: string; taskId: string }): Promise<TaskStatus | null> {
  return db.transaction(async (tx) => {
    const row = await taskRow(tx, opts.tenantId, opts.taskId, true);
    if (!row) return null;
    if (row.status === 'running') await appendDone(tx, opts.tenantId, opts.taskId, 'deleted', null);
    await tx.query(sql.unsafe`DELETE FROM tasks WHERE id = ${opts.taskId} AND tenant_id = ${opts.tenantId}`);
    return row.status;
  });
}
