import {
  ActivityCancellationType,
  CancellationScope,
  ContinueAsNew,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { planFrom } from './job-rules';
import type { GoalSnapshot, GoalState, PlanStepState, SnapshotAfterStep } from './job-types';
import { PERMANENT_FAILURE_TYPES } from '../schema/failure-types';
import { streams } from '../schema/workflow-ids';

export { isTerminal } from './job-rules';

/** Model steps: heartbeating, retried on upstream faults, and cancelled only once the activity acknowledged. */
export const modelActs = proxyActivities<Activities>({
  startToCloseTimeout: '3 minutes',
  heartbeatTimeout: '10 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: {
    initialInterval: '500 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '10 seconds',
    maximumAttempts: 3,
    nonRetryableErrorTypes: PERMANENT_FAILURE_TYPES,
  },
});

/**
 * Bookkeeping writes to PostgreSQL: short and idempotent, so they run as local activities (in the
 * worker, no task-queue round trip per write), retried generously.
 */
export const storeActs = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', maximumAttempts: 20 },
});

export async function ensurePlan(s: GoalState): Promise<void> {
  if (s.plan.length) return;
  const planned = await modelActs.planJob({
    tenantId: s.tenantId,
    jobId: s.goalId,
    title: s.title,
    description: s.description,
    lane: s.lane,
    stream: streams.goal(s.goalId),
  });
  s.plan = planFrom(planned, s.lane);
}

/** Runs plan[stepIndex] once (idempotent per goal and step) and advances the state; returns the step. */
export async function runNextStep(s: GoalState): Promise<PlanStepState> {
  return (await runStepOf(s)).step;
}

/**
 * `runNextStep` whose step activity also saves the goal row as it is after a success
 * (`snapshotAfterStep`); `saved` says it did (false from an activity that does not know how).
 */
export function runNextStepSaving(s: GoalState): Promise<StepRun> {
  return runStepOf(s, snapshotAfterStep(s));
}

/** A step that ran: its plan entry, and what the step activity says of the row it saved. */
export interface StepRun {
  step: PlanStepState;
  saved: boolean;
  /** The row's `updated_at` after the step's save (null or absent when not saved or gone). */
  savedAt?: string | null;
  snippetIsWhole?: boolean;
}

async function runStepOf(s: GoalState, snapshotAfter?: SnapshotAfterStep): Promise<StepRun> {
  const step = s.plan[s.stepIndex];
  step.status = 'running';
  const context = s.plan
    .slice(0, s.stepIndex)
    .filter((p) => p.snippet)
    .slice(-5)
    .map((p) => `${p.title}: ${p.snippet}`);
  try {
    const out = await modelActs.runJobStep({
      tenantId: s.tenantId,
      jobId: s.goalId,
      stepKey: `step-${step.index}`,
      lane: step.lane,
      prompt: step.prompt,
      system: `You are carrying out step ${step.index + 1} of ${s.plan.length} ("${step.title}") of the goal "${s.title}".${s.description ? ` Goal details: ${s.description}` : ''}`,
      context,
      stream: streams.goal(s.goalId),
      ...(snapshotAfter ? { snapshotAfter } : {}),
    });
    step.status = 'completed';
    step.outputId = out.outputId;
    step.snippet = out.snippet;
    s.lastStep = { index: step.index, title: step.title, outputId: out.outputId, snippet: out.snippet };
    s.stepIndex += 1;
    return { step, saved: out.snapshotSaved === true, savedAt: out.savedAt, snippetIsWhole: out.snippetIsWhole };
  } catch (err) {
    step.status = isCancellation(err) ? 'cancelled' : 'failed';
    throw err;
  }
}

/**
 * The goal row as it will be once plan[stepIndex] succeeded, for the step activity to write with
 * its output (a goal whose title, description and pause do not change while a step runs: a
 * sovereign goal, whose ticks are serialised).
 */
export function snapshotAfterStep(s: GoalState): SnapshotAfterStep {
  const { plan, paused: _paused, lastStep: _l, resultOutputId: _r, ...rest } = s;
  const stepIndex = s.stepIndex + 1;
  return {
    ...rest,
    status: stepIndex >= plan.length ? 'completed' : 'ready',
    stepIndex,
    totalSteps: plan.length,
    step: plan[s.stepIndex],
  };
}

/** Writes the goal row: only `changed` steps when given, else the whole plan. */
export function saveSnapshot(s: GoalState, changed?: PlanStepState[]): Promise<void> {
  const { plan, paused: _paused, ...rest } = s;
  const snap: GoalSnapshot = { ...rest, totalSteps: plan.length, ...(changed ? { steps: changed } : { plan }) };
  return storeActs.saveGoalSnapshot(snap);
}

export function failureMessage(err: unknown): string {
  let e = err as { message?: string; cause?: unknown } | undefined;
  let msg = e?.message ?? String(err);
  while (e?.cause) {
    e = e.cause as typeof e;
    if (e?.message) msg = e.message;
  }
  return msg.slice(0, 500);
}

/**
 * The end of a goal run whose body threw: continue-as-new passes through; a cancellation records
 * `cancelled` on the goal and on the plan steps whose status is in `cancelSteps` (in a
 * non-cancellable scope) and is rethrown; any other failure records `failed` with its message and
 * returns the final state.
 * @throws the ContinueAsNew or the cancellation
 */
export async function endGoalOnError(
  s: GoalState,
  err: unknown,
  cancelSteps: ReadonlyArray<PlanStepState['status']>,
): Promise<GoalState> {
  if (err instanceof ContinueAsNew) throw err;
  if (isCancellation(err)) {
    await CancellationScope.nonCancellable(async () => {
      s.status = 'cancelled';
      for (const p of s.plan) if (cancelSteps.includes(p.status)) p.status = 'cancelled';
      await saveSnapshot(s);
    });
    throw err;
  }
  s.status = 'failed';
  s.error = failureMessage(err);
  // Not cancellable: a cancel arriving during this write would leave the goal running for good. Versioned: a cancel
  // during it closed the run at once, so only closed runs replay differently, but those are replayed too.
  if (patched('goal-failure-uncancellable')) await CancellationScope.nonCancellable(() => saveSnapshot(s));
  else await saveSnapshot(s);
  return s;
}
