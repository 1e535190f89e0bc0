// Bundled only by bench/dag.ts: our workflows plus the raw DAG baselines (no-op `echo`, or the save's own writes).
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RawSaveActivities } from './dag-save-activity';

export * from '../workflows';

const options = { startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 3 } } as const;
const { echo } = proxyActivities<Activities>(options);
const { benchSave } = proxyActivities<RawSaveActivities>(options);

/**
 * The same shapes as the benchmark's tasks, with nothing around them: a chain or a fan-out of no-op
 * activities, or (`save`) of activities that write what a save step stores, into that task.
 */
export async function rawDagWorkflow(input: {
  shape: 'chain' | 'fan';
  n: number;
  save?: { tenantId: string; taskId: string };
}): Promise<number> {
  const { save } = input;
  const runId = workflowInfo().workflowId;
  const step = (stepId: string) => (save ? benchSave({ ...save, runId, stepId }) : echo({ message: stepId }));
  if (input.shape === 'chain') {
    for (let i = 0; i < input.n; i++) await step(`s${i}`);
  } else {
    await Promise.all(Array.from({ length: input.n }, (_, i) => step(`s${i}`)));
    await step('join');
  }
  return input.n;
}
