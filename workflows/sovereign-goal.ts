import {
  ApplicationFailure,
  condition,
  patched,
  continueAsNew,
  isCancellation,
  setHandler,
  workflowInfo,
  allHandlersFinished,
} from '@temporalio/workflow';
import { awaitPlannedUpdate, goalStateQuery, tickUpdate } from './job-defs';
import {
  endGoalOnError,
  ensurePlan,
  failureMessage,
  isTerminal,
  runNextStep,
  runNextStepSaving,
  saveSnapshot,
  type StepRun,
} from './job-steps';
import type { GoalState, TickResult } from './job-types';

/**
 * A sovereign goal: never advances on its own. Each `tick` update runs exactly one step and
 * answers with the new state; concurrent ticks are serialised. Finished or cancelled goals
 * reject ticks in the validator. Long histories continue as new between ticks.
 *
 * States: planning → ready ⇄ running (during a tick) → completed | failed; any → cancelled.
 */
export async function sovereignGoalWorkflow(input: { state: GoalState }): Promise<GoalState> {
  const s = input.state;
  let busy = false;
  let planSaved = false;
  setHandler(goalStateQuery, () => s);
  // The API's create waits on this (bounded) so that it can answer `ready` with the plan.
  setHandler(awaitPlannedUpdate, async () => {
    await condition(() => planSaved || isTerminal(s.status));
    return s;
  });
  setHandler(
    tickUpdate,
    async () => {
      // Several waiting ticks can see `busy` false in one activation: re-check after waking.
      while (busy) await condition(() => !busy);
      busy = true;
      try {
        // Re-checked after waiting: an earlier tick may have run the last step.
        if (isTerminal(s.status))
          throw ApplicationFailure.nonRetryable(`The goal is ${s.status}; no step left to run.`, 'GoalFinished');
        s.status = 'running';
        const step = s.plan[s.stepIndex];
        // Runs that started before the step activity could save the snapshot keep the local activity.
        const inStep = patched('snapshot-in-step');
        let run: StepRun | undefined;
        try {
          if (inStep) run = await runNextStepSaving(s);
          else await runNextStep(s);
          s.status = s.stepIndex >= s.plan.length ? 'completed' : 'ready';
          if (s.status === 'completed') s.resultOutputId = s.lastStep?.outputId ?? null;
        } catch (err) {
          if (isCancellation(err)) throw err;
          s.status = 'failed';
          s.error = failureMessage(err);
        }
        // The step saved the row as it is now (same status, index, last step and plan entry), or it failed.
        const saved = run?.saved === true;
        if (!saved) await saveSnapshot(s, [step]);
        // A compact copy: the result is serialised later, when a following tick may already have moved `s` on.
        const result: TickResult = {
          status: s.status,
          stepIndex: s.stepIndex,
          totalSteps: s.plan.length,
          lastStep: s.lastStep && { ...s.lastStep },
          error: s.error,
        };
        // What the API needs to answer without reading the row back (no command: replay-safe as is).
        if (saved && typeof run?.savedAt === 'string')
          result.saved = { step: { ...step }, updatedAt: run.savedAt, snippetIsWhole: run.snippetIsWhole === true };
        return result;
      } finally {
        busy = false;
      }
    },
    {
      validator: () => {
        if (isTerminal(s.status)) throw new Error(`The goal is ${s.status}; no step left to run.`);
        if (s.status === 'planning') throw new Error('The goal is still being planned; tick again shortly.');
      },
    },
  );

  try {
    if (!s.plan.length) {
      s.status = 'planning';
      await ensurePlan(s);
    }
    if (s.status === 'planning' || s.status === 'running') s.status = 'ready';
    await saveSnapshot(s);
    planSaved = true;
    for (;;) {
      await condition(() => isTerminal(s.status) || (!busy && workflowInfo().continueAsNewSuggested));
      if (isTerminal(s.status)) break;
      await condition(allHandlersFinished);
      await continueAsNew<typeof sovereignGoalWorkflow>({ state: s });
    }
    await condition(allHandlersFinished);
    return s;
  } catch (err) {
    const end = await endGoalOnError(s, err, ['running']);
    await condition(allHandlersFinished);
    return end;
  }
}
