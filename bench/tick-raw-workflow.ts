// Bundled only by bench/tick.ts: our workflows plus a raw one-activity step baseline for the goal step.
import { defineUpdate, proxyActivities, setHandler, condition } from '@temporalio/workflow';
import type { Activities } from '../activities';

export * from '../workflows';

const { runJobStep } = proxyActivities<Activities>({
  startToCloseTimeout: '3 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { maximumAttempts: 3 },
});

/** Runs the model-step activity once, with nothing around it (no state, no snapshot). */
export const rawStepUpdate = defineUpdate<
  string,
  [{ tenantId: string; jobId: string; stepKey: string; lane: string; prompt: string }]
>('rawStep');

export async function rawStepWorkflow(): Promise<void> {
  setHandler(rawStepUpdate, async (i) => (await runJobStep({ ...i, stream: `goal:${i.jobId}` })).outputId);
  await condition(() => false);
}
