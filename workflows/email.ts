import { ActivityFailure, ApplicationFailure, CancellationScope, patched, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

// Transient SMTP failures (4xx, connection refused or lost before the end of DATA) back off and retry;
// the heartbeat timeout lets a new worker take over soon after one is killed mid-send.
const { sendEmail } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '5 seconds',
  retry: {
    initialInterval: '500 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 6,
    nonRetryableErrorTypes: ['SmtpNotConfigured'],
  },
});
const { emailGaveUp } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 20 },
});

/** Delivers one email (`email-<id>`); the outcome is recorded on its row by the activities. */
export async function emailWorkflow(input: { tenantId: string; emailId: string }): Promise<{ status: string }> {
  try {
    return await sendEmail(input);
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const message = cause instanceof ApplicationFailure || cause instanceof Error ? cause.message : 'delivery failed';
    // Not cancellable (an operator's cancel would leave the email sending for good). Versioned: a cancel during it
    // closed the run at once, so only closed runs replay differently, but those are replayed too.
    const gaveUp = () => emailGaveUp({ ...input, error: `Gave up after repeated transient failures: ${message}` });
    if (patched('email-gave-up-uncancellable')) await CancellationScope.nonCancellable(gaveUp);
    else await gaveUp();
    return { status: 'failed' };
  }
}
