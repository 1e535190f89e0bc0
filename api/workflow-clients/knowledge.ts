import { WorkflowNotFoundError } from '@temporalio/client';
import { workflowIds } from '../../schema/workflow-ids';
import type { LearnWorkflowInput } from '../../schema/learn';
import type { learnWorkflow } from '../../workflows/learn';
import type { researchWorkflow, ResearchWorkflowInput } from '../../workflows/research';
import type { AppContext } from '../context';
import { shortTemporalCall, startWithInput } from '../start-workflow';
import { requestCancel } from './cancel';

/**
 * Enterprise learning jobs (`learn-<job id>`) and research jobs (`research-<job id>`), typed: start
 * with the workflow's input, cancel through the handle; ids come from `workflowIds`.
 * `onStartFailed` settles the stored job when the workflow could not be started.
 */
export async function startLearn(ctx: AppContext, input: LearnWorkflowInput, onStartFailed: () => Promise<unknown>) {
  const title = `Learn ${input.total} source(s)`;
  await startWithInput(ctx, 'learnWorkflow', input, {
    workflowId: workflowIds.learn(input.jobId),
    kind: 'learn',
    title,
    onStartFailed,
  });
}

/**
 * Requests cancellation of a learning job.
 * @returns the workflow's status after the request (`RUNNING` while the cancel is being handled,
 * `CANCELLED`, or another closed status when it ended first), or null when the workflow is gone
 */
export async function cancelLearn(ctx: AppContext, jobId: string): Promise<string | null> {
  const handle = ctx.deps.temporal.client.workflow.getHandle<typeof learnWorkflow>(workflowIds.learn(jobId));
  // A cancel request to a workflow that closed after the caller's check either fails with
  // WorkflowNotFoundError or is accepted as a no-op (depending on the server); either way the
  // workflow's state says whether this cancel can still take effect.
  if (!(await requestCancel(ctx, handle, 'cancel the learning job'))) return null;
  const run = await shortTemporalCall(ctx, 'check the learning job', () => handle.describe()).catch((err) =>
    err instanceof WorkflowNotFoundError ? null : Promise.reject(err),
  );
  return run?.status.name ?? null;
}

export async function startResearch(
  ctx: AppContext,
  input: ResearchWorkflowInput & { query: string },
  onStartFailed: () => Promise<unknown>,
) {
  const { query, ...args } = input;
  const title = `Research: ${query.slice(0, 80)}`;
  await startWithInput(ctx, 'researchWorkflow', args, {
    workflowId: workflowIds.research(args.jobId),
    kind: 'research',
    title,
    onStartFailed,
  });
}

/** Requests cancellation of a research job; a job whose workflow is gone is fine. */
export async function cancelResearch(ctx: AppContext, jobId: string): Promise<void> {
  const handle = ctx.deps.temporal.client.workflow.getHandle<typeof researchWorkflow>(workflowIds.research(jobId));
  await requestCancel(ctx, handle, 'cancel the research job');
}
