import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  patched,
  proxyActivities,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { activityFailureMessage } from './failure';
import { emitWebhookEvent } from './webhooks';

// The answer streams for as long as the lane takes; heartbeats (every second, and on every stored flush) let a new
// worker take over within 10 s of one dying. Failures before the first delta retry twice (an upstream 5xx, 429 or
// timeout); permanent ones (no such lane, no provider) do not.
const { runBackgroundResponse } = proxyActivities<Activities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 3 },
});
const { endBackgroundResponse } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 20 },
});

/**
 * A background response (`resp_...`, POST /v1/responses with background: true): its one activity answers and stores
 * the answer's events; a run that gives up ends the response as failed, a cancelled one (POST .../cancel, an operator
 * in the Temporal UI, a revoked key) as cancelled.
 */
export async function backgroundResponseWorkflow(input: { tenantId: string; responseId: string }): Promise<{
  status: string;
}> {
  const ended = await answered(input);
  // The tenant's webhook endpoints are told how it ended (response.completed, .incomplete, .failed, .cancelled).
  if (['completed', 'incomplete', 'failed', 'cancelled'].includes(ended.status))
    await emitWebhookEvent(input.tenantId, `response.${ended.status}`, input.responseId);
  return ended;
}

async function answered(input: { tenantId: string; responseId: string }): Promise<{ status: string }> {
  // The status reported (the result, the webhook event) is the stored one: the row lock decides which ending write
  // won. endBackgroundResponse returns it; runs recorded before it did (undefined) keep the workflow's own guess.
  try {
    return await runBackgroundResponse(input);
  } catch (err) {
    if (isCancellation(err)) {
      // The run's own last write may have ended the response before the cancel (TRY_CANCEL drops its result).
      const stored = await CancellationScope.nonCancellable(() =>
        endBackgroundResponse({ ...input, status: 'cancelled' }),
      );
      return { status: stored ?? 'cancelled' };
    }
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const message = activityFailureMessage(err, 'The response failed.');
    const type = cause instanceof ApplicationFailure ? cause.type : undefined;
    const fail = () =>
      endBackgroundResponse({
        ...input,
        status: 'failed',
        error: { code: type === 'rate_limited' ? 'rate_limit_exceeded' : 'server_error', message },
      });
    // Not cancellable: a cancel arriving while this write waits for its retry (an operator, a revoked key) would
    // otherwise leave the response running (queued) for good, its readers and webhooks never told. Versioned
    // (`response-give-up-uncancellable`): the same activity is scheduled, but a cancel during it no longer sends
    // RequestCancelActivityTask. Such a cancel closed the run at once, so only closed runs have that history; the
    // patch keeps them replayable (queries, resets, replay tests).
    const stored = patched('response-give-up-uncancellable')
      ? await CancellationScope.nonCancellable(fail)
      : await fail();
    return { status: stored ?? 'failed' };
  }
}
