import { WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import type { AppContext } from '../context';
import { shortTemporalCall } from '../start-workflow';

/**
 * Requests cancellation of a workflow, bounded like every short call.
 * @returns false when the workflow does not exist any more (closed and gone, or never started)
 * @throws AppError service_unavailable when Temporal does not answer
 */
export async function requestCancel(ctx: AppContext, handle: WorkflowHandle, what: string): Promise<boolean> {
  try {
    await shortTemporalCall(ctx, what, () => handle.cancel());
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}
