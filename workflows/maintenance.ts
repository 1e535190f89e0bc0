import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

const { sweepExpired } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
});

/** Started by the `svc-retention` schedule every hour: expired responses and files removed (see activities/maintenance). */
export async function retentionSweepWorkflow(): Promise<{ responses: number; files: number }> {
  return sweepExpired();
}
