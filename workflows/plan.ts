import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { PERMANENT_FAILURE_TYPES } from '../schema/failure-types';
import { dependantsOf } from '../schema/task-graph';
import type { PlanRunState, PlanRunStatus, PlanStepStatus, PlanWorkflowInput } from '../schema/tools-plans';
import { planApproveUpdate, planStatusQuery } from './plan-defs';

export { planApproveUpdate, planStatusQuery };

const nonRetryableErrorTypes = PERMANENT_FAILURE_TYPES;
const book = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  localRetryThreshold: '10 seconds',
  retry: {
    initialInterval: '200 ms',
    backoffCoefficient: 2,
    maximumInterval: '10 seconds',
    maximumAttempts: 20,
    nonRetryableErrorTypes,
  },
});
/** Step retries: a worker death or a database blip, never a tool's own failure (that is a stored result). */
const STEP_RETRY = {
  initialInterval: '500 ms',
  backoffCoefficient: 2,
  maximumInterval: '20 seconds',
  maximumAttempts: 6,
  nonRetryableErrorTypes,
};
/** Tool calls: retried when the worker dies or the database blips; a tool's own failure is a stored result, not a retry. */
const steps = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '10 seconds',
  retry: STEP_RETRY,
});

/**
 * Fast in-process steps (`local`): the same activity as a local activity, so a level of them and the
 * next level run within one workflow task instead of a task-queue round trip and a workflow task
 * each. Exactly once still rests on the stored result row.
 */
const localSteps = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  localRetryThreshold: '10 seconds',
  retry: STEP_RETRY,
});

function messageOf(err: unknown): { type?: string; message: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) return { type: cause.type ?? undefined, message: cause.message };
  return { message: cause instanceof Error ? cause.message : String(cause) };
}

/**
 * Runs a tool plan (workflow id `plan-<run id>`): every step whose dependencies completed starts at
 * once (independent steps in parallel); a gated step waits until approved (status
 * awaiting_approval while nothing else can run); a failed step skips its dependants. Step
 * arguments and results stay in PostgreSQL: the history carries ids and statuses only.
 */
export async function planWorkflow(input: PlanWorkflowInput): Promise<{ status: PlanRunStatus }> {
  const base = { tenantId: input.tenantId, runId: input.runId };
  const approved = new Set(input.approved);
  const state = new Map<string, PlanStepStatus>(input.steps.map((s) => [s.id, 'pending']));
  const graph = input.steps.map((s) => ({ id: s.id, depends_on: s.depends_on }));
  let status: PlanRunStatus = 'running';
  let awaiting: string[] = [];
  let approvals = 0;
  const view = (): PlanRunState => ({
    status,
    awaiting,
    approved: [...approved],
    steps: [...state].map(([id, s]) => ({ id, status: s })),
  });
  setHandler(planStatusQuery, view);
  setHandler(
    planApproveUpdate,
    (ids) => {
      for (const id of ids) approved.add(id);
      approvals++;
      return view();
    },
    {
      validator: (ids: string[]) => {
        const bad = ids.filter((id) => !input.steps.some((s) => s.id === id && s.gate));
        if (bad.length) throw new Error(`Not gated steps of this plan: ${bad.join(', ')}.`);
      },
    },
  );

  const inflight = new Map<string, Promise<void>>();
  const ready = (id: string) =>
    state.get(id) !== 'completed' &&
    input.steps.find((s) => s.id === id)!.depends_on.every((d) => state.get(d) === 'completed');
  const start = (id: string) => {
    state.set(id, 'running');
    const proxy = input.steps.find((s) => s.id === id)!.local ? localSteps : steps;
    const p = proxy
      .planRunStep({ ...base, stepId: id })
      .then(async (r) => {
        state.set(id, r.status === 'completed' ? 'completed' : 'failed');
        if (r.status !== 'completed') await skipAfter(id);
      })
      .catch(async (err: unknown) => {
        if (isCancellation(err)) throw err;
        state.set(id, 'failed');
        await book.planSettleSteps({ ...base, stepIds: [id], status: 'failed', reason: messageOf(err).message });
        await skipAfter(id);
      })
      .finally(() => inflight.delete(id));
    p.catch(() => undefined); // rejections are observed through Promise.race below
    inflight.set(id, p);
  };
  const skipAfter = async (id: string) => {
    const skipped = dependantsOf(graph, id).filter((d) => ['pending', 'awaiting_approval'].includes(state.get(d)!));
    for (const d of skipped) state.set(d, 'skipped');
    if (skipped.length)
      await book.planSettleSteps({
        ...base,
        stepIds: skipped,
        status: 'skipped',
        reason: `Skipped: step ${id} failed.`,
      });
  };

  try {
    for (;;) {
      const waiting: string[] = [];
      for (const s of input.steps) {
        const st = state.get(s.id)!;
        if ((st !== 'pending' && st !== 'awaiting_approval') || !ready(s.id)) continue;
        if (s.gate && !approved.has(s.id)) {
          state.set(s.id, 'awaiting_approval');
          waiting.push(s.id);
        } else start(s.id);
      }
      if (inflight.size) {
        // An approval that arrives while other steps run starts its step at once.
        const seen = approvals;
        await Promise.race([...inflight.values(), condition(() => approvals !== seen)]);
        continue;
      }
      if (!waiting.length) break;
      // Nothing runs and gated steps wait: pause until an approval arrives.
      awaiting = waiting;
      status = 'awaiting_approval';
      await book.planSetStatus({ ...base, status, awaiting });
      const seen = approvals;
      await condition(() => approvals !== seen);
      awaiting = [];
      status = 'running';
      await book.planSetStatus({ ...base, status, awaiting });
    }
    const final: PlanRunStatus = [...state.values()].every((s) => s === 'completed') ? 'completed' : 'failed';
    await book.planSetStatus({ ...base, status: final, awaiting: [] });
    status = final; // only now: the query never reports an end the database does not yet show
    return { status };
  } catch (err) {
    if (isCancellation(err)) {
      const open = [...state].filter(([, s]) => !['completed', 'failed', 'skipped'].includes(s)).map(([id]) => id);
      for (const id of open) state.set(id, 'cancelled');
      status = 'cancelled';
      await CancellationScope.nonCancellable(async () => {
        await book.planSettleSteps({ ...base, stepIds: open, status: 'cancelled', reason: 'The run was cancelled.' });
        await book.planSetStatus({ ...base, status: 'cancelled', awaiting: [] });
      });
    }
    throw err;
  }
}
