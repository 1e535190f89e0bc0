import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { Swept } from '../activities/store/retention';

const { sweepExpired } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
});

/**
 * Started by the `svc-retention` schedule every hour: expired responses, files and stored chat completions removed
 * (see activities/maintenance).
 */
export async function retentionSweepWorkflow(): Promise<Swept> {
  return sweepExpired();
}
