import { workflowIds } from '../../schema/workflow-ids';
import type { PadInput, SwarmInput } from '../../workflows/job-types';
import type { AppContext } from '../context';
import { startWithInput } from '../start-workflow';

/**
 * Parallel agent dispatch (`pad-<session id>`) and swarm runs (`swarm-<run id>`): their routes only
 * start them (progress is read from the rows and the event streams), typed by the workflow's input.
 * `onStartFailed` undoes the stored record when the workflow could not be started.
 */
export async function startPad(ctx: AppContext, input: PadInput, onStartFailed: () => Promise<unknown>) {
  const names = input.agents.map((a) => a.name).join(', ');
  await startWithInput(ctx, 'padWorkflow', input, {
    workflowId: workflowIds.pad(input.sessionId),
    kind: 'pad',
    title: `${input.agents.length} agents: ${names.slice(0, 120)}`,
    onStartFailed,
  });
}

export async function startSwarm(ctx: AppContext, input: SwarmInput, onStartFailed: () => Promise<unknown>) {
  const title = `swarm ${input.operation}`;
  await startWithInput(ctx, 'swarmWorkflow', input, {
    workflowId: workflowIds.swarm(input.runId),
    kind: 'swarm',
    title,
    onStartFailed,
  });
}
