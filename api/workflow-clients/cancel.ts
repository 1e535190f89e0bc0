import { WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import type { AppContext } from '../context';
import { shortTemporalCall } from '../start-workflow';

/**
 * Requests cancellation of a workflow, bounded like every short call.
 * @returns false when the workflow does not exist any more (closed and gone, or never started)
 * @throws AppError service_unavailable when Temporal does not answer
 */
/**
 * Cancels a workflow whose cancellation is already stored (a background response, a batch): its run reads that state
 * and stops by itself, so a workflow already gone is fine and an unreachable Temporal is logged, not answered.
 */
export async function cancelStoredJob(ctx: AppContext, workflowId: string, what: string): Promise<void> {
  await requestCancel(ctx, ctx.deps.temporal.client.workflow.getHandle(workflowId), `cancel the ${what}`).catch(
    (err: Error) =>
      ctx.deps.log.warn({ err: err.message, workflow_id: workflowId }, `could not cancel the ${what} workflow`),
  );
}

export async function requestCancel(ctx: AppContext, handle: WorkflowHandle, what: string): Promise<boolean> {
  try {
    await shortTemporalCall(ctx, what, () => handle.cancel());
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}
