import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type { LiteralSave, StepAction } from '../../schema/tasks';
import type { ActivityDeps } from '../deps';
import { createModelRouter } from '../providers';
import { fitsOneStatement } from '../store/documents';
import {
  beginTaskRun,
  completeSaveStep,
  completeStep,
  finishTaskRun,
  runSaveStep,
  settleSteps,
  snippetOf,
  StaleRunError,
  startStep,
  type SaveDone,
  type StepSave,
} from '../store/task-runs';
import { prepareLiteralSave, prepareSave, resolveArgs, runAction, writeSave, type ActionInput } from './actions';
import { toActivityFailure, workerShutdownFailure } from './errors';

export interface StepActivityInput {
  tenantId: string;
  taskId: string;
  stepId: string;
  runId: string;
  /** A literal save's title and content, from the run's plan (see `LiteralSave`). */
  lit?: LiteralSave;
  /** The run's last step: when it completes, the activity ends the run (completed, `done` event). */
  finish?: boolean;
}

/** A step's outcome for the workflow: a short snippet; `finished` when this (last) step ended the run. */
export interface StepOutcome {
  snippet: string;
  finished?: boolean;
}

/** Activities of the task platform: run bookkeeping and one activity per step action. */
export function createTasksActivities(deps: ActivityDeps) {
  const models = deps.models ?? createModelRouter(deps.config, { log: deps.log });

  /**
   * One step of one run, idempotent per (run, step): a step this run already completed returns
   * its stored result without repeating the side effect. Heartbeats so a lost worker is noticed
   * and cancellation reaches the action.
   */
  const runStep =
    (action: StepAction) =>
    async (input: StepActivityInput): Promise<StepOutcome> => {
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), 1000);
      const { lit, finish, ...ref } = input;
      /** The step completed (now or by an earlier attempt): the last one also ends the run. */
      const outcome = async (result: string | null): Promise<StepOutcome> => {
        const snippet = snippetOf(result);
        if (!finish) return { snippet };
        return { snippet, finished: (await finishTaskRun(deps.db, { ...ref, status: 'completed' })) !== null };
      };
      /** A save step's outcome: the last step's statement ended the run itself, unless the run no longer owned the task. */
      const saved = async (done: SaveDone): Promise<StepOutcome> =>
        done.finished ? { snippet: snippetOf(done.result), finished: true } : outcome(done.result);
      try {
        let save: StepSave | undefined;
        if (action === 'save' && lit) {
          // No external effect: the start and the completion (with what it saves) are one statement.
          save = await prepareLiteralSave(deps, ref, lit);
          if (fitsOneStatement(save.doc)) {
            const done = await runSaveStep(deps.db, { ...ref, save, finish });
            if (done !== null) return await saved(done);
          }
          // Not pending for this run (a retry, a stale run) or too large: the ordinary path decides.
        }
        const started = await startStep(deps.db, ref);
        if (started.done) return await outcome(started.result);
        const actionInput: ActionInput = {
          deps,
          models,
          tenantId: input.tenantId,
          taskId: input.taskId,
          runId: input.runId,
          step: started.step,
          args: resolveArgs(started.step.args, started.depResults),
          depResults: started.depResults,
          signal: ctx.cancellationSignal,
        };
        let result: string;
        if (action === 'save') {
          save ??= await prepareSave(actionInput);
          // The common case: the save's output and document go with the completion, one statement
          // batched with the run's other step writes. Vectors or many chunks: written first, on their own.
          if (fitsOneStatement(save.doc)) return await saved(await completeSaveStep(deps.db, { ...ref, save, finish }));
          result = await writeSave(actionInput, save);
        } else {
          result = await runAction(action, actionInput);
        }
        await completeStep(deps.db, { ...ref, result });
        return await outcome(result);
      } catch (err) {
        const shutdown = workerShutdownFailure(ctx.cancellationSignal);
        if (shutdown) throw shutdown;
        if (err instanceof StaleRunError)
          throw ApplicationFailure.create({ message: err.message, type: 'StaleRunError', nonRetryable: true });
        throw toActivityFailure(err);
      } finally {
        clearInterval(beat);
      }
    };

  return {
    /** The run takes the task; returns the steps to schedule, or null when the task is gone or not claimed. */
    taskBeginRun: (input: { tenantId: string; taskId: string; runId: string }) => beginTaskRun(deps.db, input),
    taskSettleSteps: (input: Parameters<typeof settleSteps>[1]) => settleSteps(deps.db, input),
    taskFinishRun: async (input: Parameters<typeof finishTaskRun>[1]): Promise<{ finished: boolean }> => ({
      finished: (await finishTaskRun(deps.db, input)) !== null,
    }),
    taskStepResearch: runStep('research'),
    taskStepFetch: runStep('fetch'),
    taskStepSummarize: runStep('summarize'),
    taskStepCompare: runStep('compare'),
    taskStepDraft: runStep('draft'),
    taskStepGenerate: runStep('generate'),
    taskStepSave: runStep('save'),
    taskStepWebhook: runStep('webhook'),
  };
}
