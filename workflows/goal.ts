import { condition, continueAsNew, setHandler, workflowInfo, allHandlersFinished } from '@temporalio/workflow';
import { goalStateQuery, pauseGoalSignal, renameGoalSignal, resumeGoalSignal } from './job-defs';
import { endGoalOnError, ensurePlan, isTerminal, runNextStep, saveSnapshot } from './job-steps';
import type { GoalState } from './job-types';

/**
 * A regular goal: plans (unless given steps) and runs every step to completion on its own.
 * Pause/resume and rename arrive as signals; polling reads the state query. Cancellation waits
 * for the running model step to acknowledge, then records `cancelled`.
 */
export async function goalWorkflow(input: { state: GoalState }): Promise<GoalState> {
  const s = input.state;
  setHandler(goalStateQuery, () => s);
  setHandler(pauseGoalSignal, () => {
    s.paused = true;
    if (!isTerminal(s.status)) s.status = 'paused';
  });
  setHandler(resumeGoalSignal, () => {
    s.paused = false;
    if (s.status === 'paused') s.status = 'running';
  });
  setHandler(renameGoalSignal, (patch) => {
    if (patch.title) s.title = patch.title;
    if (patch.description !== undefined) s.description = patch.description;
  });

  try {
    if (!s.plan.length) {
      s.status = s.paused ? 'paused' : 'running';
      await ensurePlan(s);
      await saveSnapshot(s);
    }
    while (s.stepIndex < s.plan.length) {
      if (s.paused) {
        s.status = 'paused';
        await saveSnapshot(s, []);
        await condition(() => !s.paused);
      }
      s.status = 'running';
      await saveSnapshot(s, [await runNextStep(s)]);
      if (workflowInfo().continueAsNewSuggested) {
        await condition(allHandlersFinished);
        await continueAsNew<typeof goalWorkflow>({ state: s });
      }
    }
    s.status = 'completed';
    s.resultOutputId = s.lastStep?.outputId ?? null;
    await saveSnapshot(s, []);
    return s;
  } catch (err) {
    return endGoalOnError(s, err, ['running', 'pending']);
  }
}
