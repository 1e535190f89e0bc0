import { WorkflowNotFoundError } from '@temporalio/client';
import { claimTaskRun, releaseTaskRun, type TaskClaim } from '../../activities/store/task-runs';
import type { TaskRunState } from '../../schema/tasks';
import { workflowIds } from '../../schema/workflow-ids';
import { taskStatusQuery } from '../../workflows/task-defs';
import type { taskRunWorkflow } from '../../workflows/task-dag';
import type { AppContext } from '../context';
import { shortTemporalCall, startJobWorkflow } from '../start-workflow';

/**
 * The task run's workflow, typed: start, query and cancel go through the workflow's own function
 * type and query definition, never a string name; its id comes from `workflowIds`.
 */
function handle(ctx: AppContext, taskId: string) {
  return ctx.deps.temporal.client.workflow.getHandle<typeof taskRunWorkflow>(workflowIds.task(taskId));
}

/**
 * Claims the task for a run (`claimTaskRun`, which also records the calling key for the run, so revoking
 * the key cancels it) and starts the run the claim decided: nothing when the claim attached to a running
 * run. The claim's run key and plan go in the workflow input (the run needs no begin step of its own);
 * a start that fails releases the claim (`releaseTaskRun`).
 * @throws AppError not_found (not the tenant's task), service_unavailable (Temporal unreachable)
 */
export async function claimAndStartRun(ctx: AppContext, tenantId: string, taskId: string): Promise<TaskClaim> {
  const keyId = ctx.state.principal?.keyId;
  const claim = await claimTaskRun(ctx.deps.db, { tenantId, taskId, ...(keyId === undefined ? {} : { keyId }) });
  if (!claim.run) return claim;
  const { task, previous, run } = claim;
  await startJobWorkflow(ctx, {
    workflow: 'taskRunWorkflow',
    workflowId: workflowIds.task(task.id),
    kind: 'task',
    tenantId,
    title: task.title,
    args: [{ tenantId, taskId: task.id, claim: run, wakeLoop: true }],
    surface: task.surface ?? undefined,
    // The database claim already decided that no run owns the task: a leftover execution
    // (e.g. a cancelled run still cleaning up) is replaced, never joined.
    idConflictPolicy: 'TERMINATE_EXISTING',
    idReusePolicy: 'ALLOW_DUPLICATE',
    onStartFailed: () => releaseTaskRun(ctx.deps.db, { tenantId, taskId: task.id, previous, runKey: run.runKey }),
    keyRecorded: keyId !== undefined,
  });
  return claim;
}

/** The live state of a run, or null when no worker answers now or the run just ended (the database answers then). */
export async function queryTaskRun(ctx: AppContext, taskId: string): Promise<TaskRunState | null> {
  try {
    return await shortTemporalCall(ctx, 'query the task', () => handle(ctx, taskId).query(taskStatusQuery));
  } catch {
    return null;
  }
}

/** Cancels a task's workflow; a run that already ended (or never started) is fine. */
export async function cancelTaskRun(ctx: AppContext, taskId: string): Promise<void> {
  try {
    // Bounded: with Temporal unreachable the database change stands and the run's activities stop on
    // their own (StaleRunError: the run no longer owns its steps).
    await shortTemporalCall(ctx, 'cancel the task', () => handle(ctx, taskId).cancel());
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return;
    ctx.deps.log.warn({ err: (err as Error).message, task_id: taskId }, 'could not cancel the task workflow');
  }
}
