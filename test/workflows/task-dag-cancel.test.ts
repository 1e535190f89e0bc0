import { Context } from '@temporalio/activity';
import { taskStatusQuery } from '../../workflows/task-defs';
import { pollUntil } from '../helpers/poll';
import { gate, mockedWorkflows } from './mocked-worker';

// DAG cancellation with mocked activities (the other DAG cases are in task-dag.test.ts).
jest.setTimeout(120_000);
const { run } = mockedWorkflows();

test.each([
  ['the race loop (earlier runs)', {}],
  ['the wake loop', { wakeLoop: true as const }],
])(
  '%s: cancelling a running DAG stops its steps, starts no dependant, and finishes the run cancelled',
  async (_name, loop: { wakeLoop?: true }) => {
    const plan = [
      { id: 'a', depends_on: [] },
      { id: 'b', depends_on: [] },
      { id: 'after', depends_on: ['a', 'b'] },
    ];
    const started: string[] = [];
    const stopped: string[] = [];
    const finished: string[] = [];
    const both = gate();
    const r = await run(
      'taskDagWorkflow',
      [{ tenantId: 't', taskId: 'x', ...loop }],
      {
        taskBeginRun: async () => plan.map((p) => ({ ...p, action: 'save', status: 'pending' })),
        taskSettleSteps: async () => undefined,
        taskFinishRun: async (i: { status: string }) => {
          finished.push(i.status);
          return { finished: true };
        },
        taskStepSave: async (i: { stepId: string }) => {
          started.push(i.stepId);
          if (started.length === 2) both.open();
          const ctx = Context.current();
          const beat = setInterval(() => ctx.heartbeat(), 100);
          try {
            await ctx.cancelled;
          } catch (err) {
            stopped.push(i.stepId);
            throw err;
          } finally {
            clearInterval(beat);
          }
          return { snippet: 'never' };
        },
      },
      async (h) => {
        await both.promise;
        await h.cancel();
        // The activities see the cancellation through their heartbeats.
        await pollUntil(
          async () => stopped.length,
          (n) => n === 2,
        );
        return h.query(taskStatusQuery);
      },
    );
    expect(r.error?.name).toBe('WorkflowFailedError');
    expect(started.sort()).toEqual(['a', 'b']);
    expect(stopped.sort()).toEqual(['a', 'b']);
    expect(finished).toEqual(['cancelled']);
    // What the run shows once its steps stopped: every open step cancelled, the dependant never started.
    expect(r.during?.status).toBe('cancelled');
    expect(r.during?.steps.map((s) => s.status)).toEqual(['cancelled', 'cancelled', 'cancelled']);
  },
);
