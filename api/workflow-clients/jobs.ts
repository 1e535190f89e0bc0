import { workflowIds } from '../../schema/workflow-ids';
import type { PadInput, SwarmInput } from '../../workflows/job-types';
import type { AppContext } from '../context';
import { startJobWorkflow } from '../start-workflow';

/**
 * Parallel agent dispatch (`pad-<session id>`) and swarm runs (`swarm-<run id>`): their routes only
 * start them (progress is read from the rows and the event streams), typed by the workflow's input.
 * `onStartFailed` undoes the stored record when the workflow could not be started.
 */
export async function startPad(ctx: AppContext, input: PadInput, onStartFailed: () => Promise<unknown>) {
  await startJobWorkflow(ctx, {
    workflow: 'padWorkflow',
    workflowId: workflowIds.pad(input.sessionId),
    kind: 'pad',
    tenantId: input.tenantId,
    title: `${input.agents.length} agents: ${input.agents
      .map((a) => a.name)
      .join(', ')
      .slice(0, 120)}`,
    args: [input],
    onStartFailed,
  });
}

export async function startSwarm(ctx: AppContext, input: SwarmInput, onStartFailed: () => Promise<unknown>) {
  await startJobWorkflow(ctx, {
    workflow: 'swarmWorkflow',
    workflowId: workflowIds.swarm(input.runId),
    kind: 'swarm',
    tenantId: input.tenantId,
    title: `swarm ${input.operation}`,
    args: [input],
    onStartFailed,
  });
}
