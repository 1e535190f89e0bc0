import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { StepActivityInput, StepOutcome } from '../activities/tasks';
import { PERMANENT_FAILURE_TYPES } from '../schema/failure-types';
import { dependantsOf } from '../schema/task-graph';
import type { LiteralSave, StepAction, StepStatus, TaskRunClaim, TaskRunInput, TaskStatus } from '../schema/tasks';

import { taskStatusQuery } from './task-defs';

export { taskStatusQuery };

const nonRetryableErrorTypes = PERMANENT_FAILURE_TYPES;

/**
 * Run bookkeeping: short database writes that belong to the workflow, so they run as local
 * activities in the workflow's own worker (no task-queue round trip each; their results are
 * recorded as markers), retried patiently.
 */
const bookRetry = {
  initialInterval: '200 ms',
  backoffCoefficient: 2,
  maximumInterval: '10 seconds',
  maximumAttempts: 20,
  nonRetryableErrorTypes,
} as const;
const localBook = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  localRetryThreshold: '10 seconds',
  retry: bookRetry,
});
/** Runs started before bookkeeping became local replay with task-queue activities (see `patched` below). */
const remoteBook = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: bookRetry });
const fetchActs = proxyActivities<Activities>({
  startToCloseTimeout: '60 seconds',
  heartbeatTimeout: '10 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 4,
    nonRetryableErrorTypes,
  },
});
const modelActs = proxyActivities<Activities>({
  startToCloseTimeout: '150 seconds',
  heartbeatTimeout: '15 seconds',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 3,
    nonRetryableErrorTypes,
  },
});
const saveActs = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: '10 seconds',
  retry: {
    initialInterval: '500 ms',
    backoffCoefficient: 2,
    maximumInterval: '10 seconds',
    maximumAttempts: 5,
    nonRetryableErrorTypes,
  },
});
/** Webhooks: retries with exponential backoff (1 s, 2 s, 4 s, ... up to a minute apart). */
const webhookActs = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: '10 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '60 seconds',
    maximumAttempts: 6,
    nonRetryableErrorTypes,
  },
});

type StepActivity = (input: StepActivityInput) => Promise<StepOutcome>;
const ACTIVITY: Record<StepAction, StepActivity> = {
  research: modelActs.taskStepResearch,
  summarize: modelActs.taskStepSummarize,
  compare: modelActs.taskStepCompare,
  draft: modelActs.taskStepDraft,
  generate: modelActs.taskStepGenerate,
  fetch: fetchActs.taskStepFetch,
  save: saveActs.taskStepSave,
  webhook: webhookActs.taskStepWebhook,
};

function failureOf(err: unknown): { type?: string; message: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) return { type: cause.type ?? undefined, message: cause.message };
  return { message: cause instanceof Error ? cause.message : String(cause) };
}

interface PlanStep {
  action: StepAction;
  depends_on: string[];
  status: StepStatus;
  /** A small literal save's title and content (the plan carries them; runs begun earlier have none). */
  lit?: LiteralSave;
}

/** How a run begins and ends: fixed for `taskRunWorkflow`, decided by patches for `taskDagWorkflow`. */
interface RunMode {
  /** Local-activity bookkeeping (settle, finish, begin), or task-queue activities for the oldest runs. */
  book: typeof localBook;
  /** The API's claim: the run key and the plan (no begin local activity); absent: the run begins itself. */
  claim?: TaskRunClaim;
  /** The run's last step ends the run itself when it completes (no finishing local activity after it). */
  finishInStep: boolean;
}

/**
 * Runs a task's step DAG (workflow id `task-<taskId>`), as started by the API since the workflow type
 * became `taskRunWorkflow`: the claim's plan and run key, local bookkeeping, the last step ends the
 * run. Every step whose dependencies are all completed starts at once, so independent steps run in
 * parallel. A failed step skips its dependants; the others keep running; the task ends failed. Step
 * results stay in PostgreSQL: the history carries only ids and short snippets. Cancellation marks
 * open steps cancelled in a non-cancellable scope.
 *
 * A workflow type of its own instead of `patched` calls: every patch records a marker and upserts the
 * TemporalChangeVersion search attribute in each new run's history (three patches: six events and three
 * visibility writes per run), although no run of this type ever took the paths they guard.
 */
export async function taskRunWorkflow(input: TaskRunInput & { claim: TaskRunClaim }): Promise<{
  status: TaskStatus;
}> {
  return runDag(input, { book: localBook, claim: input.claim, finishInStep: true });
}

/**
 * The DAG run of the runs started before `taskRunWorkflow` (kept registered so they finish and
 * replay): the patches decide, in the order they were always checked, what each run did.
 */
export async function taskDagWorkflow(input: TaskRunInput): Promise<{ status: TaskStatus }> {
  const book = patched('local-bookkeeping') ? localBook : remoteBook;
  // The API's claim stamped the run key and gave the plan: no begin local activity (the run's first
  // workflow task schedules the first steps). Runs started without a claim in their input begin as before.
  const claim = input.claim !== undefined && patched('plan-from-claim') ? input.claim : undefined;
  // The run's last step ends the run itself when it completes (no finishing local activity after it);
  // runs started earlier replay with the local activity.
  const finishInStep = patched('finish-in-last-step');
  return runDag(input, { book, claim, finishInStep });
}

async function runDag(input: TaskRunInput, mode: RunMode): Promise<{ status: TaskStatus }> {
  const { book, claim, finishInStep } = mode;
  const base = { tenantId: input.tenantId, taskId: input.taskId, runId: claim?.runKey ?? workflowInfo().runId };
  let status: TaskStatus = 'running';
  const steps = new Map<string, PlanStep>();
  setHandler(taskStatusQuery, () => ({ status, steps: [...steps].map(([id, s]) => ({ id, status: s.status })) }));

  const plan = claim ? claim.steps : await book.taskBeginRun(base);
  if (!plan) return { status: 'cancelled' };
  for (const s of plan)
    steps.set(s.id, { action: s.action as StepAction, depends_on: s.depends_on, status: s.status, lit: s.lit });
  const graph = [...steps].map(([id, s]) => ({ id, depends_on: s.depends_on }));

  let stale = false;
  /** Set when the last step's activity ended the run (`finish`): the database already shows the end. */
  let finished = false;
  const inflight = new Map<string, Promise<void>>();
  // Each turn of the loop below waits for the next step to settle. A run started with `wakeLoop` waits on
  // one promise per turn, resolved by the step that settles; earlier runs raced every step in flight on
  // each turn: a new promise per step per turn (~5,000 for a 100-wide fan-out), each paying the SDK's
  // stack-trace capture. Runs replay with the loop they started with (`wakeLoop` is in their input).
  let wake: (() => void) | undefined;
  /** A step's failure handling that threw (a cancellation, bookkeeping that gave up): the loop rethrows it. */
  let thrown: { err: unknown } | undefined;
  const settled = (id: string) => {
    inflight.delete(id);
    const w = wake;
    wake = undefined;
    w?.();
  };

  const onFailure = async (id: string, err: unknown) => {
    if (isCancellation(err)) throw err;
    const f = failureOf(err);
    if (f.type === 'StaleRunError') {
      stale = true;
      return;
    }
    steps.get(id)!.status = 'failed';
    const skipped = dependantsOf(graph, id).filter((d) => steps.get(d)?.status === 'pending');
    for (const d of skipped) steps.get(d)!.status = 'skipped';
    await book.taskSettleSteps({ ...base, stepIds: [id], status: 'failed', reason: f.message });
    if (skipped.length)
      await book.taskSettleSteps({
        ...base,
        stepIds: skipped,
        status: 'skipped',
        reason: `Skipped: step ${id} failed.`,
      });
  };

  const start = (id: string, s: PlanStep) => {
    // The last step of a run that has gone well so far: it ends the run (completed) when it completes.
    const last =
      finishInStep && inflight.size === 0 && [...steps].every(([other, o]) => other === id || o.status === 'completed');
    s.status = 'running';
    const run = ACTIVITY[s.action]({
      ...base,
      stepId: id,
      ...(s.lit ? { lit: s.lit } : {}),
      ...(last ? { finish: true } : {}),
    });
    const completed = (r: StepOutcome) => {
      s.status = 'completed';
      if (last && r.finished === true) finished = true;
    };
    if (input.wakeLoop) {
      const p = run.then(
        (r) => {
          completed(r);
          settled(id);
        },
        (err: unknown) =>
          onFailure(id, err).then(
            () => settled(id),
            (e: unknown) => {
              thrown ??= { err: e };
              settled(id);
            },
          ),
      );
      inflight.set(id, p);
      return;
    }
    const p = run.then(completed, (err: unknown) => onFailure(id, err)).finally(() => inflight.delete(id));
    p.catch(() => undefined); // rejections are observed through Promise.race below
    inflight.set(id, p);
  };

  try {
    for (;;) {
      if (thrown) throw thrown.err;
      if (!stale) {
        for (const [id, s] of steps) {
          if (
            s.status === 'pending' &&
            !inflight.has(id) &&
            s.depends_on.every((d) => steps.get(d)?.status === 'completed')
          )
            start(id, s);
        }
      }
      if (inflight.size === 0) break;
      if (input.wakeLoop) await new Promise<void>((r) => (wake = r));
      else await Promise.race(inflight.values());
    }
    if (stale) return { status: 'cancelled' };
    const stuck = [...steps].filter(([, s]) => s.status === 'pending').map(([id]) => id);
    if (stuck.length) {
      for (const id of stuck) steps.get(id)!.status = 'skipped';
      await book.taskSettleSteps({
        ...base,
        stepIds: stuck,
        status: 'skipped',
        reason: 'Skipped: a dependency did not complete.',
      });
    }
    const final = [...steps.values()].some((s) => s.status === 'failed' || s.status === 'skipped')
      ? 'failed'
      : 'completed';
    if (!finished) await book.taskFinishRun({ ...base, status: final });
    status = final; // only now: the query never reports an end the database does not yet show
    return { status };
  } catch (err) {
    if (isCancellation(err)) {
      status = 'cancelled';
      for (const s of steps.values()) if (s.status === 'pending' || s.status === 'running') s.status = 'cancelled';
      await CancellationScope.nonCancellable(() => book.taskFinishRun({ ...base, status: 'cancelled' }));
    }
    throw err;
  }
}
