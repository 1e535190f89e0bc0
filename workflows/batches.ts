import {
  ActivityCancellationType,
  CancellationScope,
  isCancellation,
  patched,
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
  // Versioning of the ending writes (`batch-finish-uncancellable`, `batch-give-up-uncancellable`): an ending write in
  // CancellationScope.nonCancellable schedules the same activity, but a cancel arriving during it no longer sends
  // RequestCancelActivityTask (nor rejects it at once). A run still open can have such a history (its success path's
  // finish cancelled, the catch's 'cancelled' finish still retrying), and it would not replay. On the give-up path such
  // a cancel closed the run at once, so only closed runs have it, but queries, resets and replay tests replay those
  // too. Runs without the marker keep the old calls; the patches can be deprecated once no batch started before them
  // is open (a batch lasts at most its 24-hour window plus its ending).
  try {
    const r = await run.run(() => runBatchRequests(input));
    const outcome = r.expired || expired ? 'expired' : r.cancelled ? 'cancelled' : 'completed';
    // Not cancellable: the batch ends as this write says, and the workflow reports what it wrote. (Cancelled, it was
    // followed by a second ending write, 'cancelled', that lost to this one when it had committed: the batch stored
    // completed while the workflow said and sent batch.cancelled.)
    if (patched('batch-finish-uncancellable'))
      await CancellationScope.nonCancellable(() => finishBatchRun({ ...input, outcome }));
    else await finishBatchRun({ ...input, outcome });
    return { status: outcome };
  } catch (err) {
    const uncancellable = patched('batch-give-up-uncancellable');
    // A cancelled run ends cancelled (expired at the end of its window), with what was answered. So does a run that
    // failed after its cancel: its activity may answer a cancel with another failure (the worker stopping, a failed
    // write), which is no reason to fail the requests still pending.
    const stopped =
      isCancellation(err) || (uncancellable && (expired || CancellationScope.current().consideredCancelled));
    if (stopped) {
      const outcome = expired ? 'expired' : 'cancelled';
      await CancellationScope.nonCancellable(() => finishBatchRun({ ...input, outcome }));
      return { status: outcome };
    }
    // The run gave up (its retries spent): what was answered is kept, the rest ends failed, in the error file. Not
    // cancellable: a cancel arriving while this write waits for its retry would otherwise leave the batch cancelling for
    // good (nothing else ends a batch), holding a running slot.
    const why = activityFailureMessage(err, 'the batch run failed');
    const giveUp = () =>
      finishBatchRun({ ...input, outcome: 'completed', failPending: `The batch's run gave up: ${why}` });
    if (uncancellable) await CancellationScope.nonCancellable(giveUp);
    else await giveUp();
    return { status: 'completed' };
  }
}
