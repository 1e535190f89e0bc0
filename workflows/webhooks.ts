import {
  CancellationScope,
  ParentClosePolicy,
  patched,
  proxyActivities,
  startChild,
  uuid4,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { webhookEventStart, type WebhookEvent } from '../schema/webhook-events';
import { activityFailureMessage } from './failure';

const { webhookTargets } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 5 },
});
// A receiver that is down is tried again for about ten hours (2 s, then three times longer each time, at most an hour
// apart), as webhook senders do; one that refuses the event (a 4xx) or cannot be reached by the fetch guard is not.
const { deliverWebhook } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 3,
    maximumInterval: '1 hour',
    maximumAttempts: 15,
    nonRetryableErrorTypes: ['webhook_refused'],
  },
});

/** One event (`webhook-evt_...`) delivered to each endpoint that takes it, side by side, each with its own retries. */
export async function webhookEventWorkflow(i: {
  tenantId: string;
  event: WebhookEvent;
  endpoints: string[];
}): Promise<string[]> {
  return Promise.all(
    i.endpoints.map((endpointId) =>
      deliverWebhook({ tenantId: i.tenantId, endpointId, event: i.event }).catch(
        (err: unknown) => `not delivered: ${activityFailureMessage(err, 'the delivery failed')}`,
      ),
    ),
  );
}

/**
 * Called by a job's workflow as it ends (a background response, a batch): when the tenant has endpoints for the
 * event, a delivery workflow is started beside it and left to run (the job's workflow does not wait for receivers).
 * Not cancellable: a cancelled job still says it ended. Versioned (`webhook-events`): runs started before it replay
 * as they ran.
 */
export async function emitWebhookEvent(tenantId: string, type: string, id: string): Promise<void> {
  if (!patched('webhook-events')) return;
  await CancellationScope.nonCancellable(async () => {
    const endpoints = await webhookTargets({ tenantId, type });
    if (!endpoints.length) return;
    const start = webhookEventStart({
      eventId: `evt_${uuid4().replace(/-/g, '')}`,
      tenantId,
      type,
      id,
      endpoints,
      nowMs: Date.now(),
    });
    await startChild(webhookEventWorkflow, {
      workflowId: start.workflowId,
      args: start.args,
      parentClosePolicy: ParentClosePolicy.ABANDON,
      typedSearchAttributes: start.searchAttributes,
    });
  });
}
