import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { AppError } from '../../schema/errors';
import { parsePlan, planningPrompt, type PlannedStep } from '../../reasoning/job-plan';
import type { GoalSnapshot, SnapshotAfterStep, StepOutputRef } from '../../workflows/job-types';
import type { ActivityDeps } from '../deps';
import { createModelRouter } from '../providers';
import type { ChatMessageIn } from '../providers/types';
import { appendEvent, hasStepEvent } from '../store/events';
import { saveGoalState } from '../store/goals';
import { findJobOutput, saveJobOutput } from '../store/job-outputs';
import { finishPadSession, updatePadAgent, type PadAgentUpdate } from '../store/pad';
import { saveSwarmRun } from '../store/swarm';
import { workerShutdownFailure } from '../tasks/errors';
import { snippetOf } from '../../schema/snippet';
import { streams } from '../../schema/workflow-ids';

/** Goal step snippets keep their lines: planning falls back to one when the full output is gone. */
const snippet = (s: string) => snippetOf(s, 300, { keepLines: true });

/** Model faults that another attempt cannot fix. */
const PERMANENT = new Set(['model_not_found', 'service_unavailable', 'invalid_request', 'forbidden', 'unauthorized']);

export interface RunStepInput {
  tenantId: string;
  jobId: string;
  /** Idempotency key of the step within its job (e.g. `step-3`, `agent-0`, `vote-2`). */
  stepKey: string;
  lane: string;
  prompt: string;
  system?: string;
  /** Earlier outputs the step may build on, as short texts. */
  context?: string[];
  /** Event stream for progress events (e.g. `goal:<id>`). */
  stream?: string;
  /**
   * A goal step: the goal row as it is once this step succeeded, written (with its `goal.state`
   * event) right after the output, so the workflow needs no local activity to save it.
   */
  snapshotAfter?: SnapshotAfterStep;
}

/** `SnapshotAfterStep` completed with the step's output. */
function snapshotWithOutput(a: SnapshotAfterStep, out: { outputId: string; snippet: string }): GoalSnapshot {
  const { step, ...rest } = a;
  return {
    ...rest,
    lastStep: { index: step.index, title: step.title, outputId: out.outputId, snippet: out.snippet },
    steps: [{ ...step, status: 'completed', outputId: out.outputId, snippet: out.snippet }],
    resultOutputId: a.status === 'completed' ? out.outputId : null,
  };
}

/** Activities of the durable agent jobs (goals, sovereign goals, PAD, swarm). */
export function createJobsActivities(deps: ActivityDeps) {
  const { db, log } = deps;
  const models = deps.models ?? createModelRouter(deps.config, { log });

  /** A snapshot's `goal.state` event. */
  const stateEvent = (state: GoalSnapshot) => ({
    type: 'goal.state',
    data: { status: state.status, step_index: state.stepIndex, total: state.totalSteps },
  });

  /** The goal row and its `goal.state` event (after `before`, e.g. the step's own event), in one statement. */
  /** @returns the row's new `updated_at`, null when the row is gone */
  function saveGoalSnapshotOf(state: GoalSnapshot, before: Array<{ type: string; data: unknown }> = []) {
    return saveGoalState(db, state, { stream: streams.goal(state.goalId), items: [...before, stateEvent(state)] });
  }

  /** A step's `step.completed` event. */
  const stepCompleted = (step: string, out: { outputId: string; snippet: string }) => ({
    type: 'step.completed',
    data: { step, output_id: out.outputId, snippet: out.snippet },
  });

  async function runJobStep(i: RunStepInput): Promise<StepOutputRef> {
    const existing = await findJobOutput(db, i.tenantId, i.jobId, i.stepKey);
    if (existing) {
      const out = { outputId: existing.id, snippet: snippet(existing.content) };
      // A retried step whose output is in: its step.completed event and its goal's row may not be (the attempt died
      // in between); what is missing is written now.
      const completed = stepCompleted(i.stepKey, out);
      const withRow = !!i.snapshotAfter && i.stream === streams.goal(i.snapshotAfter.goalId);
      const missing =
        !!i.stream &&
        !(await hasStepEvent(db, { tenantId: i.tenantId, stream: i.stream, type: completed.type, step: i.stepKey }));
      if (missing && !withRow) await appendEvent(db, { tenantId: i.tenantId, stream: i.stream!, ...completed });
      const savedAt = i.snapshotAfter
        ? await saveGoalSnapshotOf(snapshotWithOutput(i.snapshotAfter, out), missing && withRow ? [completed] : [])
        : null;
      return {
        ...out,
        provider: existing.provider,
        durationMs: existing.duration_ms ?? 0,
        reused: true,
        snapshotSaved: !!i.snapshotAfter,
        ...(i.snapshotAfter ? { savedAt, snippetIsWhole: out.snippet === existing.content } : {}),
      };
    }
    const ctx = Context.current();
    const beat = setInterval(() => ctx.heartbeat({ step: i.stepKey }), 1000);
    const messages: ChatMessageIn[] = [];
    if (i.system) messages.push({ role: 'system', content: i.system });
    const context = (i.context ?? []).filter(Boolean);
    messages.push({
      role: 'user',
      content: context.length
        ? `${i.prompt}\n\nEarlier results:\n${context.map((c, n) => `${n + 1}. ${c}`).join('\n')}`
        : i.prompt,
    });
    const started = performance.now();
    try {
      if (i.stream)
        await appendEvent(db, {
          tenantId: i.tenantId,
          stream: i.stream,
          type: 'step.started',
          data: { step: i.stepKey, attempt: ctx.info.attempt },
        });
      const res = await models.complete({ lane: i.lane, messages, signal: ctx.cancellationSignal, timeoutMs: 120_000 });
      const durationMs = performance.now() - started;
      const row = await saveJobOutput(db, {
        tenantId: i.tenantId,
        jobId: i.jobId,
        stepKey: i.stepKey,
        lane: i.lane,
        provider: res.provider,
        content: res.content,
        usage: res.usage,
        durationMs,
      });
      const out = { outputId: row.id, snippet: snippet(row.content) };
      const completed = stepCompleted(i.stepKey, out);
      // A goal step on its goal's stream: the row and both events (step.completed, goal.state) in one statement.
      const withRow = !!i.snapshotAfter && i.stream === streams.goal(i.snapshotAfter.goalId);
      if (i.stream && !withRow) await appendEvent(db, { tenantId: i.tenantId, stream: i.stream, ...completed });
      const savedAt = i.snapshotAfter
        ? await saveGoalSnapshotOf(snapshotWithOutput(i.snapshotAfter, out), withRow ? [completed] : [])
        : null;
      log.info({ job: i.jobId, step: i.stepKey, lane: i.lane, ms: Math.round(durationMs) }, 'job step completed');
      return {
        ...out,
        provider: row.provider,
        durationMs: Math.round(durationMs),
        reused: false,
        snapshotSaved: !!i.snapshotAfter,
        ...(i.snapshotAfter ? { savedAt, snippetIsWhole: out.snippet === row.content } : {}),
      };
    } catch (err) {
      if (ctx.cancellationSignal.aborted) {
        // A worker going down is not a cancellation of the step: fail retryably so the next worker runs it.
        const shutdown = workerShutdownFailure(ctx.cancellationSignal);
        if (shutdown) {
          log.info({ job: i.jobId, step: i.stepKey }, 'job step interrupted by worker shutdown; it will be retried');
          throw shutdown;
        }
        log.info({ job: i.jobId, step: i.stepKey }, 'job step cancelled: upstream call aborted');
        throw new CancelledFailure('step cancelled');
      }
      if (err instanceof AppError) {
        const message = `${i.stepKey}: ${err.message}`;
        if (i.stream)
          await appendEvent(db, {
            tenantId: i.tenantId,
            stream: i.stream,
            type: 'step.failed',
            data: { step: i.stepKey, error: err.message, attempt: ctx.info.attempt },
          });
        throw PERMANENT.has(err.code)
          ? ApplicationFailure.nonRetryable(message, 'ModelUnavailable')
          : ApplicationFailure.retryable(message, 'ModelUpstreamError');
      }
      throw err;
    } finally {
      clearInterval(beat);
    }
  }

  return {
    runJobStep,

    /** Asks the lane for a plan (stored like any step output) and parses it. */
    async planJob(i: {
      tenantId: string;
      jobId: string;
      title: string;
      description: string | null;
      lane: string;
      stream?: string;
    }): Promise<PlannedStep[]> {
      const out = await runJobStep({
        tenantId: i.tenantId,
        jobId: i.jobId,
        stepKey: 'plan',
        lane: i.lane,
        prompt: planningPrompt(i.title, i.description),
        stream: i.stream,
      });
      const full = await findJobOutput(db, i.tenantId, i.jobId, 'plan');
      return parsePlan(full?.content ?? out.snippet, i.title, i.description);
    },

    /** The goal row and its `goal.state` event, in one statement. */
    async saveGoalSnapshot(state: GoalSnapshot): Promise<void> {
      await saveGoalSnapshotOf(state);
    },

    async recordPadAgent(i: Omit<PadAgentUpdate, 'attempt'>): Promise<void> {
      const attempt = i.status === 'running' ? Context.current().info.attempt : undefined;
      await updatePadAgent(db, { ...i, attempt });
      await appendEvent(db, {
        tenantId: i.tenantId,
        stream: streams.pad(i.sessionId),
        type: 'agent.state',
        data: { index: i.index, status: i.status, output_id: i.outputId ?? null },
      });
    },

    /** One PAD agent: a bounded model call whose attempts are recorded on the agent row. */
    async runPadAgent(i: {
      tenantId: string;
      sessionId: string;
      index: number;
      prompt: string;
      lane: string;
      surface: string | null;
    }): Promise<StepOutputRef> {
      await updatePadAgent(db, {
        tenantId: i.tenantId,
        sessionId: i.sessionId,
        index: i.index,
        status: 'running',
        attempt: Context.current().info.attempt,
      });
      return runJobStep({
        tenantId: i.tenantId,
        jobId: i.sessionId,
        stepKey: `agent-${i.index}`,
        lane: i.lane,
        prompt: i.prompt,
        system: i.surface
          ? `You are one agent of a parallel dispatch, working for the ${i.surface} surface. Answer concisely.`
          : undefined,
      });
    },

    async finishPad(i: { tenantId: string; sessionId: string; status: 'completed' | 'cancelled' }): Promise<void> {
      await finishPadSession(db, i.tenantId, i.sessionId, i.status);
      await appendEvent(db, {
        tenantId: i.tenantId,
        stream: streams.pad(i.sessionId),
        type: 'session.state',
        data: { status: i.status },
      });
    },

    async saveSwarm(i: {
      tenantId: string;
      runId: string;
      status: string;
      progress: { done: number; total: number };
      result?: unknown;
      error?: string | null;
    }): Promise<void> {
      await saveSwarmRun(db, {
        id: i.runId,
        tenantId: i.tenantId,
        status: i.status,
        progress: i.progress,
        result: i.result,
        error: i.error,
      });
      await appendEvent(db, {
        tenantId: i.tenantId,
        stream: streams.swarm(i.runId),
        type: 'run.state',
        data: { status: i.status, progress: i.progress },
      });
    },
  };
}
