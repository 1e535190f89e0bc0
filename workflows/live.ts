import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

const { liveSample } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 3 },
});

/** Started by the `svc-live-sample` schedule once a minute: one live-state sample (see activities/live/sample.ts). */
export async function liveSampleWorkflow(): Promise<{ id: number; eri: number }> {
  // Workflow time is deterministic: the sample is keyed by this minute.
  return liveSample({ at: new Date().toISOString() });
}
