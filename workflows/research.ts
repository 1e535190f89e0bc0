import { CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { activityFailureMessage } from './failure';

// The steps heartbeat every second while they wait (activities/heartbeat.ts), so a cancel reaches them within the
// heartbeatTimeout and aborts the model call or fetch they make, and a dead worker's step is retried after 10 s. The
// timeouts only bound attempts: the model's own deadlines (60 s planning, 120 s report) and each query's search end
// within one attempt, so the documented fallbacks (the question as the plan, an extractive report, search.failed)
// happen instead of the attempt being killed. Changing activity options does not change the commands' type or id, so
// this is replay-safe for running workflows (their already-scheduled activities keep the options they had).
const retry4 = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '20 seconds',
  maximumAttempts: 4,
};
const { researchPlan, researchReport } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '10 seconds',
  retry: retry4,
});
// Up to 5 queries one after another, each waiting up to its engine's timeout (at most 60 s).
const { researchSearch } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '10 seconds',
  retry: retry4,
});
const { researchFetch } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '10 seconds',
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
