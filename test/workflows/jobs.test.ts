import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import { goalStateQuery, pauseGoalSignal, resumeGoalSignal, tickUpdate } from '../../workflows/job-defs';
import { planFrom } from '../../workflows/job-rules';
import type { GoalSnapshot, GoalState } from '../../workflows/job-types';
import { pollUntil } from '../helpers/poll';
import { gate, mockedWorkflows } from './mocked-worker';

// Goal, sovereign-goal and PAD workflows alone, with their activities mocked: no database, no model.
jest.setTimeout(120_000);
const { run } = mockedWorkflows();

function goalState(kind: 'goal' | 'sovereign', steps: number): GoalState {
  const plan = planFrom(
    Array.from({ length: steps }, (_, i) => ({ title: `s${i}`, prompt: `do ${i}` })),
    'svc-oracle',
  );
  return {
    goalId: `g-${kind}`,
    tenantId: 't',
    kind,
    title: 'Goal',
    description: null,
    lane: 'svc-oracle',
    status: kind === 'goal' ? 'pending' : 'ready',
    plan,
    stepIndex: 0,
    paused: false,
    lastStep: null,
    resultOutputId: null,
    error: null,
  };
}

/** Job activities that record every step and snapshot; `step` decides how a step ends. */
function jobActivities(step: (stepKey: string) => Promise<void> = async () => undefined) {
  const steps: string[] = [];
  const snapshots: GoalSnapshot[] = [];
  return {
    steps,
    snapshots,
    activities: {
      planJob: async () => [],
      saveGoalSnapshot: async (s: GoalSnapshot) => void snapshots.push(s),
      runJobStep: async (i: { stepKey: string }) => {
        steps.push(i.stepKey);
        await step(i.stepKey);
        return {
          outputId: `out-${i.stepKey}`,
          snippet: `done ${i.stepKey}`,
          provider: null,
          durationMs: 1,
          reused: false,
        };
      },
    },
  };
}

/** A step that heartbeats until the workflow cancels it, then acknowledges. */
async function untilCancelled(): Promise<void> {
  const ctx = Context.current();
  const beat = setInterval(() => ctx.heartbeat(), 200);
  try {
    await ctx.cancelled;
  } finally {
    clearInterval(beat);
  }
}

describe('goal workflow', () => {
  test('pause holds the next step until resume; then every step runs once, in order', async () => {
    const first = gate();
    const started = gate();
    const mock = jobActivities(async (key) => {
      if (key === 'step-0') {
        started.open();
        await first.promise;
      }
    });
    const r = await run('goalWorkflow', [{ state: goalState('goal', 3) }], mock.activities, async (h) => {
      await started.promise;
      await h.signal(pauseGoalSignal);
      first.open();
      const paused = await pollUntil(
        () => h.query(goalStateQuery),
        (s) => s.status === 'paused' && s.stepIndex === 1,
      );
      // Paused after the running step: nothing else started.
      expect(mock.steps).toEqual(['step-0']);
      await h.signal(resumeGoalSignal);
      return paused;
    });
    expect(r.during?.paused).toBe(true);
    expect(r.result?.status).toBe('completed');
    expect(mock.steps).toEqual(['step-0', 'step-1', 'step-2']);
    expect(r.result?.resultOutputId).toBe('out-step-2');
    expect(mock.snapshots.some((s) => s.status === 'paused')).toBe(true);
  });

  test('cancel waits for the running step to acknowledge, then records the goal and step cancelled', async () => {
    const started = gate();
    const mock = jobActivities(async () => {
      started.open();
      await untilCancelled();
    });
    const r = await run('goalWorkflow', [{ state: goalState('goal', 2) }], mock.activities, async (h) => {
      await started.promise;
      await h.cancel();
    });
    expect(r.error?.name).toBe('WorkflowFailedError');
    expect(mock.steps).toEqual(['step-0']);
    const last = mock.snapshots.at(-1)!;
    expect(last.status).toBe('cancelled');
    // The running step and the ones not yet run are all recorded cancelled.
    expect(last.plan?.map((p) => p.status)).toEqual(['cancelled', 'cancelled']);
  });
});

describe('sovereign goal workflow', () => {
  test('each tick runs exactly one step; a tick after the last is refused', async () => {
    const mock = jobActivities();
    const r = await run('sovereignGoalWorkflow', [{ state: goalState('sovereign', 2) }], mock.activities, async (h) => {
      const one = await h.executeUpdate(tickUpdate);
      expect(one).toMatchObject({ status: 'ready', stepIndex: 1, totalSteps: 2 });
      expect(mock.steps).toEqual(['step-0']);
      const two = await h.executeUpdate(tickUpdate);
      expect(two).toMatchObject({ status: 'completed', stepIndex: 2, lastStep: { outputId: 'out-step-1' } });
      // Refused by the validator while the workflow is closing, or not found once it has closed.
      const refused = await h.executeUpdate(tickUpdate).then(
        () => null,
        (e: Error) => e,
      );
      expect(refused instanceof WorkflowUpdateFailedError || refused instanceof WorkflowNotFoundError).toBe(true);
    });
    expect(r.result?.status).toBe('completed');
    expect(mock.steps).toEqual(['step-0', 'step-1']);
  });

  test('concurrent ticks are serialised: two ticks run two different steps', async () => {
    const mock = jobActivities();
    await run('sovereignGoalWorkflow', [{ state: goalState('sovereign', 3) }], mock.activities, async (h) => {
      const ticks = await Promise.all([h.executeUpdate(tickUpdate), h.executeUpdate(tickUpdate)]);
      expect(ticks.map((t) => t.stepIndex).sort()).toEqual([1, 2]);
      await h.cancel();
    });
    expect(mock.steps).toEqual(['step-0', 'step-1']);
  });
});

describe('PAD workflow', () => {
  const agents = (n: number) =>
    Array.from({ length: n }, (_, index) => ({ index, name: `a${index}`, prompt: 'p', lane: 'l', surface: null }));

  /** PAD activities: `agent` runs each agent; records and the finish are kept. */
  function padActivities(agent: (index: number) => Promise<void>) {
    const records: Array<{ index: number; status: string; error?: string }> = [];
    const finished: string[] = [];
    return {
      records,
      finished,
      activities: {
        runPadAgent: async (i: { index: number }) => {
          await agent(i.index);
          return { outputId: `out-${i.index}`, durationMs: 1 };
        },
        recordPadAgent: async (i: { index: number; status: string; error?: string }) =>
          void records.push({ index: i.index, status: i.status, error: i.error }),
        finishPad: async (i: { status: string }) => void finished.push(i.status),
      },
    };
  }

  test('at most max_concurrency agents run at once, and that many do', async () => {
    let inflight = 0;
    let peak = 0;
    const both = gate();
    const mock = padActivities(async () => {
      inflight++;
      peak = Math.max(peak, inflight);
      // The first two finish only once both run together: a serial run would never get here.
      if (peak >= 2) both.open();
      await both.promise;
      inflight--;
    });
    const r = await run(
      'padWorkflow',
      [{ sessionId: 's', tenantId: 't', maxConcurrency: 2, agents: agents(6) }],
      mock.activities,
    );
    expect(r.result).toEqual({ completed: 6, failed: 0 });
    expect(peak).toBe(2);
    expect(mock.records.map((x) => x.index).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(mock.finished).toEqual(['completed']);
  });

  test('a failed agent is recorded with its error; the others complete and the session ends completed', async () => {
    const mock = padActivities(async (index) => {
      if (index === 1) throw ApplicationFailure.nonRetryable('agent 1 broke', 'invalid_request');
    });
    const r = await run(
      'padWorkflow',
      [{ sessionId: 's', tenantId: 't', maxConcurrency: 3, agents: agents(3) }],
      mock.activities,
    );
    expect(r.result).toEqual({ completed: 2, failed: 1 });
    const failed = mock.records.filter((x) => x.status === 'failed');
    expect(failed).toHaveLength(1);
    expect(failed[0].index).toBe(1);
    expect(failed[0].error).toContain('agent 1 broke');
    expect(mock.finished).toEqual(['completed']);
  });
});
