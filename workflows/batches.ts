import {
  ActivityCancellationType,
  CancellationScope,
  isCancellation,
  proxyActivities,
  sleep,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { activityFailureMessage } from './failure';
import { emitWebhookEvent } from './webhooks';

// A batch's requests are answered by a pool of lanes; the heartbeat (every second) lets a new worker take over within
// 10 s of one dying, resuming with the requests still pending.
const { runBatchRequests } = proxyActivities<Activities>({
  startToCloseTimeout: '24 hours',
  heartbeatTimeout: '10 seconds',
  // A cancelled run records what it answered before the batch's files are written.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 20 },
});
const { finishBatchRun, markBatchCancelling } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', maximumAttempts: 20 },
});

/**
 * A batch (`batch_...`, POST /v1/batches): its requests answered, then its output and error files written. A cancel
 * (POST .../cancel, an operator, a revoked key) ends it as cancelled, and the end of its window (a durable timer) as
 * expired, each with what was answered by then.
 */
export async function batchWorkflow(input: {
  tenantId: string;
  batchId: string;
  expiresAtMs?: number;
}): Promise<{ status: string }> {
  const ended = await runBatch(input);
  // The tenant's webhook endpoints are told how it ended (batch.completed, .cancelled, .expired).
  await emitWebhookEvent(input.tenantId, `batch.${ended.status}`, input.batchId);
  return ended;
}

async function runBatch(input: {
  tenantId: string;
  batchId: string;
  expiresAtMs?: number;
}): Promise<{ status: string }> {
  const run = new CancellationScope();
  let expired = false;
  // Cancelled from outside (POST .../cancel has marked it already; an operator or a revoked key has not): the batch
  // is marked cancelling at once, so the run stops within a second instead of at its next throttled heartbeat.
  CancellationScope.current().cancelRequested.catch(() =>
    CancellationScope.nonCancellable(() => markBatchCancelling(input)).catch(() => undefined),
  );
  if (input.expiresAtMs !== undefined)
    sleep(Math.max(0, input.expiresAtMs - Date.now())).then(
      () => {
        expired = true;
        run.cancel();
      },
      () => undefined, // the workflow was cancelled first
    );
  try {
    const r = await run.run(() => runBatchRequests(input));
    const outcome = r.expired || expired ? 'expired' : r.cancelled ? 'cancelled' : 'completed';
    await finishBatchRun({ ...input, outcome });
    return { status: outcome };
  } catch (err) {
    if (isCancellation(err)) {
      const outcome = expired ? 'expired' : 'cancelled';
      await CancellationScope.nonCancellable(() => finishBatchRun({ ...input, outcome }));
      return { status: outcome };
    }
    // The run gave up (its retries spent): what was answered is kept, the rest ends failed, in the error file.
    const why = activityFailureMessage(err, 'the batch run failed');
    await finishBatchRun({ ...input, outcome: 'completed', failPending: `The batch's run gave up: ${why}` });
    return { status: 'completed' };
  }
}
