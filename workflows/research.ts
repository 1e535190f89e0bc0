import { CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { activityFailureMessage } from './failure';

const { researchPlan, researchSearch, researchReport } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '20 seconds', maximumAttempts: 4 },
});
const { researchFetch } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 3 },
});
const { researchFinish } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 20 },
});

export interface ResearchWorkflowInput {
  tenantId: string;
  jobId: string;
  /** Sources fetched at the same time. */
  concurrency?: number;
}

const failureMessage = (err: unknown) => activityFailureMessage(err, 'research failed');

/**
 * Research job `research-<jobId>`: plan → search → fetch the sources (a bounded number at a time)
 * → write the report with verified citations. Every step stores its result in PostgreSQL and
 * returns it when retried, so a worker restart resumes where the job was. Cancellation and
 * failure close the job in a non-cancellable scope.
 */
export async function researchWorkflow(input: ResearchWorkflowInput): Promise<string> {
  const ref = { tenantId: input.tenantId, jobId: input.jobId };
  try {
    await researchPlan(ref);
    const sources = await researchSearch(ref);
    const fetched: Array<{ n: number; ok: boolean; error?: string }> = [];
    let next = 0;
    const lane = async () => {
      while (next < sources.length) {
        const s = sources[next++];
        try {
          fetched.push(await researchFetch({ ...ref, n: s.n, url: s.url }));
        } catch (err) {
          if (isCancellation(err)) throw err;
          fetched.push({ n: s.n, ok: false, error: failureMessage(err) });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(input.concurrency ?? 4, sources.length)) }, lane));
    await researchReport({ ...ref, fetched });
    await researchFinish({ ...ref, status: 'completed' });
    return 'completed';
  } catch (err) {
    const status = isCancellation(err) ? 'cancelled' : 'failed';
    await CancellationScope.nonCancellable(() =>
      researchFinish({ ...ref, status, ...(status === 'failed' ? { error: failureMessage(err) } : {}) }),
    );
    throw err;
  }
}
