import { sql } from 'slonik';
import { AppError, notFound } from '../../schema/errors';
import { checkGraph } from '../../schema/task-graph';
import { stepPatchAllowed, type Step, type StepCreateBody, type StepPatchBody } from '../../schema/tasks';
import type { Db } from './db';
import { newId } from './ids';
import { graphError, insertSteps, STEP_COLS, StepRow, stepsOf, taskRow, toStep } from './tasks';

function refuseWhileRunning(status: string): void {
  if (status === 'running')
    throw new AppError(
      'conflict',
      'The task is running: its steps change only after the run ends (or cancel it first).',
    );
}

/**
 * Appends a step to a task, checking ids, dependencies and cycles against the existing steps.
 * @throws AppError not_found, conflict (task running, id taken), invalid_request (graph)
 */
export async function appendStep(
  db: Db,
  opts: { tenantId: string; taskId: string; body: StepCreateBody },
): Promise<Step> {
  const step = { ...opts.body, id: opts.body.id ?? newId('stp') };
  await db.transaction(async (tx) => {
    const task = await taskRow(tx, opts.tenantId, opts.taskId, true);
    if (!task) throw notFound('Task');
    refuseWhileRunning(task.status);
    const existing = await stepsOf(tx, opts.tenantId, [opts.taskId]);
    if (existing.some((s) => s.id === step.id))
      throw new AppError('conflict', `Step id "${step.id}" is already used in this task.`);
    const all = [
      ...existing.map((s) => ({ id: s.id, depends_on: s.depends_on, args: s.args })),
      { id: step.id, depends_on: step.depends_on ?? [], args: step.args },
    ];
    const problems = checkGraph(all).filter((p) => p.index === -1 || p.index === all.length - 1);
    if (problems.length) throw graphError(problems, () => 'body');
    const nextOrder = existing.reduce((m, s) => Math.max(m, s.order_num + 1), 0);
    await insertSteps(tx, { tenantId: opts.tenantId, taskId: opts.taskId, steps: [step], firstOrder: nextOrder });
    // A finished task with new work is open again.
    if (task.status === 'completed') {
      await tx.query(
        sql.unsafe`UPDATE tasks SET status = 'pending', updated_at = now() WHERE id = ${opts.taskId} AND tenant_id = ${opts.tenantId}`,
      );
    } else {
      await tx.query(
        sql.unsafe`UPDATE tasks SET updated_at = now() WHERE id = ${opts.taskId} AND tenant_id = ${opts.tenantId}`,
      );
    }
  });
  const rows = await stepsOf(db, opts.tenantId, [opts.taskId]);
  return toStep(rows.find((s) => s.id === step.id) as StepRow);
}

/**
 * Changes a step's status (legal client transitions only) and/or result.
 * @throws AppError not_found, conflict (task running or illegal transition)
 */
export async function patchStep(
  db: Db,
  opts: { tenantId: string; taskId: string; stepId: string; patch: StepPatchBody },
): Promise<Step> {
  return db.transaction(async (tx) => {
    const task = await taskRow(tx, opts.tenantId, opts.taskId, true);
    if (!task) throw notFound('Task');
    const step = await tx.maybeOne(sql.type(StepRow)`
      SELECT ${STEP_COLS} FROM task_steps WHERE task_id = ${opts.taskId} AND id = ${opts.stepId} AND tenant_id = ${opts.tenantId}`);
    if (!step) throw notFound('Step');
    refuseWhileRunning(task.status);
    const to = opts.patch.status ?? step.status;
    if (!stepPatchAllowed(step.status, to))
      throw new AppError('conflict', `Step status cannot change from ${step.status} to ${to}.`);
    const result =
      opts.patch.result === undefined
        ? to === 'pending' && to !== step.status
          ? null
          : step.result
        : opts.patch.result;
    const finished = to === 'pending' ? null : to === step.status ? step.finished_at : new Date().toISOString();
    return toStep(
      await tx.one(sql.type(StepRow)`
        UPDATE task_steps SET status = ${to}, result = ${result},
          error = ${to === step.status ? step.error : null},
          finished_at = ${finished}::timestamptz,
          started_at = ${to === 'pending' ? null : step.started_at}::timestamptz
        WHERE task_id = ${opts.taskId} AND id = ${opts.stepId} AND tenant_id = ${opts.tenantId}
        RETURNING ${STEP_COLS}`),
    );
  });
}

/**
 * Removes a step.
 * @throws AppError not_found, conflict (task running, or other steps depend on it)
 */
export async function deleteStep(db: Db, opts: { tenantId: string; taskId: string; stepId: string }): Promise<void> {
  await db.transaction(async (tx) => {
    const task = await taskRow(tx, opts.tenantId, opts.taskId, true);
    if (!task) throw notFound('Task');
    const steps = await stepsOf(tx, opts.tenantId, [opts.taskId]);
    if (!steps.some((s) => s.id === opts.stepId)) throw notFound('Step');
    refuseWhileRunning(task.status);
    const dependants = steps.filter((s) => s.depends_on.includes(opts.stepId)).map((s) => s.id);
    if (dependants.length) {
      throw new AppError(
        'conflict',
        `Step "${opts.stepId}" cannot be removed: ${dependants.map((d) => `"${d}"`).join(', ')} depend on it.`,
      );
    }
    await tx.query(
      sql.unsafe`DELETE FROM task_steps WHERE task_id = ${opts.taskId} AND id = ${opts.stepId} AND tenant_id = ${opts.tenantId}`,
    );
    await tx.query(
      sql.unsafe`UPDATE tasks SET updated_at = now() WHERE id = ${opts.taskId} AND tenant_id = ${opts.tenantId}`,
    );
  });
}
