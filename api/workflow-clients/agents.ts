import { WorkflowNotFoundError } from '@temporalio/client';
import { workflowIds } from '../../schema/workflow-ids';
import type { AgentWorkflowInput, agentWorkflow } from '../../workflows/agent';
import type { AppContext } from '../context';
import { shortTemporalCall, startJobWorkflow } from '../start-workflow';

/** The agent run's workflow, typed: started through the workflow's own function type, id from `workflowIds`. */
export async function startAgentRun(
  ctx: AppContext,
  o: { input: AgentWorkflowInput; kind: 'agent' | 'workspace'; title: string; onStartFailed: () => Promise<unknown> },
): Promise<void> {
  await startJobWorkflow(ctx, {
    workflow: 'agentWorkflow',
    workflowId: workflowIds.agent(o.input.runId),
    kind: o.kind,
    tenantId: o.input.tenantId,
    title: o.title,
    args: [o.input],
    onStartFailed: o.onStartFailed,
  });
}

/** Cancels a run's workflow; one that already ended (or never started) is fine. */
export async function cancelAgentRun(ctx: AppContext, runId: string): Promise<void> {
  const handle = ctx.deps.temporal.client.workflow.getHandle<typeof agentWorkflow>(workflowIds.agent(runId));
  await shortTemporalCall(ctx, 'cancel the agent run', () => handle.cancel()).catch((err) => {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  });
}
