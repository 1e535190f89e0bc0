import { CancellationScope, defineQuery, isCancellation, proxyActivities, setHandler } from '@temporalio/workflow';
import { PERMANENT_FAILURE_TYPES } from '../schema/failure-types';
import type { Activities } from '../activities';
import type { LearnStatus, LearnWorkflowInput } from '../schema/learn';
import { activityFailureMessage } from './failure';

const { learnSource } = proxyActivities<Activities>({
  startToCloseTimeout: '3 minutes',
  heartbeatTimeout: '20 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '15 seconds',
    maximumAttempts: 4,
    nonRetryableErrorTypes: PERMANENT_FAILURE_TYPES,
  },
});
const { learnStart, learnSourceFailed, learnFinish } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 20 },
});

export interface LearnProgress {
  status: LearnStatus;
  done: number;
  total: number;
}

/** Live progress for operators and tests (the poll endpoint reads the same facts from PostgreSQL). */
export const learnProgressQuery = defineQuery<LearnProgress>('learnProgress');

const failureMessage = (err: unknown) => activityFailureMessage(err, 'the source could not be learned');

/**
 * Enterprise learning job `learn-<jobId>`: learns each source (a few at a time); one bad source
 * is recorded as failed and never fails the others. Cancellation closes the job in a
 * non-cancellable scope so it is never left running.
 */
export async function learnWorkflow(input: LearnWorkflowInput): Promise<LearnProgress> {
  const ref = { tenantId: input.tenantId, jobId: input.jobId };
  let status: LearnStatus = 'queued';
  let done = 0;
  setHandler(learnProgressQuery, () => ({ status, done, total: input.total }));
  try {
    await learnStart(ref);
    status = 'running';
    let next = 0;
    const lane = async () => {
      while (next < input.total) {
        const index = next++;
        try {
          await learnSource({ ...ref, index });
        } catch (err) {
          if (isCancellation(err)) throw err;
          await learnSourceFailed({ ...ref, index, error: failureMessage(err) });
        }
        done++;
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(input.concurrency ?? 3, input.total)) }, lane));
    status = await learnFinish(ref);
  } catch (err) {
    if (isCancellation(err)) {
      status = await CancellationScope.nonCancellable(() => learnFinish({ ...ref, cancelled: true }));
    } else {
      status = await CancellationScope.nonCancellable(() => learnFinish(ref));
    }
    throw err;
  }
  return { status, done, total: input.total };
}
