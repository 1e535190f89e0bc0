import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { AppError } from '../../schema/errors';
import type { PlanRunState, PlanWorkflowInput } from '../../schema/tools-plans';
import { workflowIds } from '../../schema/workflow-ids';
import type { planWorkflow } from '../../workflows/plan';
import { planApproveUpdate, planStatusQuery } from '../../workflows/plan-defs';
import type { AppContext } from '../context';
import { shortTemporalCall, startJobWorkflow } from '../start-workflow';

/** The plan run's workflow, typed (function type, query and update definitions; id from `workflowIds`). */
function handle(ctx: AppContext, runId: string) {
  return ctx.deps.temporal.client.workflow.getHandle<typeof planWorkflow>(workflowIds.plan(runId));
}

export async function startPlanRun(
  ctx: AppContext,
  o: { input: PlanWorkflowInput; goal: string; onStartFailed: () => Promise<unknown> },
): Promise<void> {
  await startJobWorkflow(ctx, {
    workflow: 'planWorkflow',
    workflowId: workflowIds.plan(o.input.runId),
    kind: 'plan',
    tenantId: o.input.tenantId,
    title: `Plan: ${o.goal.slice(0, 80)}`,
    args: [o.input],
    onStartFailed: o.onStartFailed,
  });
}

/** Live state, or null when no worker answers now or the run ended (the database answers then). */
export async function queryPlanRun(ctx: AppContext, runId: string): Promise<PlanRunState | null> {
  try {
    return await shortTemporalCall(ctx, 'query the plan run', () => handle(ctx, runId).query(planStatusQuery));
  } catch {
    return null;
  }
}

/**
 * Approves gated steps through the workflow's update (validated there).
 * @throws AppError invalid_request (not gated steps), conflict (the run has ended), service_unavailable
 */
export async function approvePlanRun(ctx: AppContext, runId: string, steps: string[]): Promise<PlanRunState> {
  try {
    return await shortTemporalCall(
      ctx,
      'approve the steps',
      () => handle(ctx, runId).executeUpdate(planApproveUpdate, { args: [steps] }),
      15_000,
    );
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError)
      throw new AppError('invalid_request', (err.cause as Error | undefined)?.message ?? 'The approval was refused.', {
        details: [{ path: 'body.steps', message: (err.cause as Error | undefined)?.message ?? 'refused' }],
      });
    if (err instanceof WorkflowNotFoundError) throw new AppError('conflict', 'The plan run has ended.');
    throw err;
  }
}

/** Cancels the run's workflow; a run that already ended is fine. */
export async function cancelPlanRun(ctx: AppContext, runId: string): Promise<void> {
  try {
    await shortTemporalCall(ctx, 'cancel the plan run', () => handle(ctx, runId).cancel());
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return;
    throw err;
  }
}
