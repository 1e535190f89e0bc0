import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { testEnv } from '../helpers/harness';
import { mockedWorkflows } from './mocked-worker';

// Replay safety of the DAG workflow: histories recorded by the code before `patched('finish-in-last-step')`
// and the literal saves (fixtures v1: a 3-step chain, a fan-out with a join, a chain whose last step fails,
// with mocked activities) replay on today's code; so do histories recorded by the code that takes the
// plan and run key from the claim (`patched('plan-from-claim')`, fixtures v2) and histories recorded now.
// Runs the API starts now are of the type `taskRunWorkflow` (fixtures v3: no patch at all).
jest.setTimeout(120_000);

const { run } = mockedWorkflows();
const fixtures = JSON.parse(
  readFileSync(path.join(__dirname, 'fixtures', 'task-dag-histories-v1.json'), 'utf8'),
) as Record<string, string>;
const claimed = JSON.parse(
  readFileSync(path.join(__dirname, 'fixtures', 'task-dag-histories-v2.json'), 'utf8'),
) as Record<string, string>;
const typed = JSON.parse(
  readFileSync(path.join(__dirname, 'fixtures', 'task-dag-histories-v3.json'), 'utf8'),
) as Record<string, string>;
const decode = (b64: string) => temporal.api.history.v1.History.decode(Buffer.from(b64, 'base64'));
const markers = (h: temporal.api.history.v1.IHistory) =>
  (h.events ?? []).filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length;
const replay = (h: temporal.api.history.v1.IHistory) =>
  Worker.runReplayHistory({ workflowBundle: { codePath: testEnv().bundlePath } }, h);

/** The step and settle activities of a run of literal saves (each checks its literal; the last one ends the run). */
const literalSaveActs = (onStep: (i: { stepId: string; runId: string; finish?: boolean }) => void) => ({
  taskSettleSteps: async () => undefined,
  taskFinishRun: async () => ({ finished: true }),
  taskStepSave: async (i: { stepId: string; runId: string; finish?: boolean; lit?: unknown }) => {
    onStep(i);
    expect(i.lit).toEqual({ title: i.stepId, content: 'x' });
    return { snippet: 'ok', ...(i.finish ? { finished: true } : {}) };
  },
});

test.each(['chain', 'fan', 'failedLast'])('a %s run recorded before the change replays on this code', async (name) => {
  const history = decode(fixtures[name]);
  // Recorded with the finishing local activity after the last step (begin + finish; + the failed step's settle).
  expect(markers(history)).toBe(name === 'failedLast' ? 3 : 2);
  await expect(replay(history)).resolves.toBeUndefined();
});

test('a run recorded now ends in its last step (no finishing local activity) and replays', async () => {
  const plan = [
    { id: 'a', depends_on: [] },
    { id: 'b', depends_on: ['a'] },
  ];
  const finishes: string[] = [];
  const { result, during } = await run(
    'taskDagWorkflow',
    [{ tenantId: 't', taskId: 'x' }],
    {
      taskBeginRun: async () =>
        plan.map((p) => ({ ...p, action: 'save', status: 'pending', lit: { title: p.id, content: 'x' } })),
      ...literalSaveActs((i) => {
        if (i.finish) finishes.push(i.stepId);
      }),
    },
    async (h) => {
      await h.result();
      return h.fetchHistory();
    },
  );
  expect(result).toEqual({ status: 'completed' });
  expect(finishes).toEqual(['b']);
  expect(markers(during!)).toBe(1);
  await expect(replay(during!)).resolves.toBeUndefined();
});

test.each(['claimChain', 'claimFan', 'claimFailedLast'])(
  'a %s run recorded with the plan from the claim (no begin) replays on this code',
  async (name) => {
    const history = decode(claimed[name]);
    // No begin: only the failed step's settle and the finish are local activities.
    expect(markers(history)).toBe(name === 'claimFailedLast' ? 2 : 0);
    await expect(replay(history)).resolves.toBeUndefined();
  },
);

test('a run started with the claim takes its plan and run key from the input: no begin, every step under the key; it replays', async () => {
  const steps = ['a', 'b'].map((id, i) => ({
    id,
    action: 'save',
    depends_on: i ? ['a'] : [],
    status: 'pending' as const,
    lit: { title: id, content: 'x' },
  }));
  const seen: string[] = [];
  const { result, during } = await run(
    'taskDagWorkflow',
    [{ tenantId: 't', taskId: 'x', claim: { runKey: 'run_key', steps } }],
    {
      taskBeginRun: async () => {
        throw new Error('a claimed run does not begin');
      },
      ...literalSaveActs((i) => seen.push(`${i.stepId}:${i.runId}:${i.finish === true}`)),
    },
    async (h) => {
      await h.result();
      return h.fetchHistory();
    },
  );
  expect(result).toEqual({ status: 'completed' });
  expect(seen).toEqual(['a:run_key:false', 'b:run_key:true']);
  expect(markers(during!)).toBe(0);
  await expect(replay(during!)).resolves.toBeUndefined();
});

test('a claimed run whose key a newer claim replaced ends cancelled without writing more', async () => {
  const steps = [
    { id: 'a', action: 'fetch', depends_on: [], status: 'pending' as const },
    { id: 'b', action: 'save', depends_on: ['a'], status: 'pending' as const },
  ];
  const calls: string[] = [];
  const { result } = await run(
    'taskDagWorkflow',
    [{ tenantId: 't', taskId: 'x', claim: { runKey: 'run_old', steps } }],
    {
      taskBeginRun: async () => {
        throw new Error('a claimed run does not begin');
      },
      taskSettleSteps: async () => {
        calls.push('settle');
      },
      taskFinishRun: async () => {
        calls.push('finish');
        return { finished: false };
      },
      taskStepFetch: async (i: { stepId: string }) => {
        calls.push(i.stepId);
        throw ApplicationFailure.create({ message: 'stale', type: 'StaleRunError', nonRetryable: true });
      },
      taskStepSave: async (i: { stepId: string }) => {
        calls.push(i.stepId);
        return { snippet: 'ok' };
      },
    },
  );
  expect(result).toEqual({ status: 'cancelled' });
  expect(calls).toEqual(['a']);
});

test.each(['runChain', 'runFan', 'runFailedLast'])(
  'a %s run of taskRunWorkflow (as the API starts runs now) replays; it records no patch marker and no search-attribute upsert',
  async (name) => {
    const history = decode(typed[name]);
    const events = history.events ?? [];
    expect(events[0].workflowExecutionStartedEventAttributes?.workflowType?.name).toBe('taskRunWorkflow');
    expect(events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')).toHaveLength(0);
    expect(events.filter((e) => e.upsertWorkflowSearchAttributesEventAttributes)).toHaveLength(0);
    // No begin; a run that goes well ends in its last step. A failed last step: its settle and the finish.
    expect(markers(history)).toBe(name === 'runFailedLast' ? 2 : 0);
    await expect(replay(history)).resolves.toBeUndefined();
  },
);

test('taskDagWorkflow still records its patches (runs started before taskRunWorkflow take the same paths)', async () => {
  const steps = [
    { id: 'a', action: 'save', depends_on: [], status: 'pending' as const, lit: { title: 'a', content: 'x' } },
  ];
  const { result, during } = await run(
    'taskDagWorkflow',
    [{ tenantId: 't', taskId: 'x', claim: { runKey: 'run_key', steps } }],
    literalSaveActs(() => undefined),
    async (h) => {
      await h.result();
      return h.fetchHistory();
    },
  );
  expect(result).toEqual({ status: 'completed' });
  const patches = (during!.events ?? []).filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch');
  expect(patches).toHaveLength(3);
});

test('a run with the wake loop (as the API starts runs now) settles like the race loop and replays: a 30-wide fan-out, one failed branch', async () => {
  const fan = Array.from({ length: 30 }, (_, i) => `s${i}`);
  const save = (id: string, depends_on: string[]) => ({
    id,
    action: 'save',
    depends_on,
    status: 'pending' as const,
    lit: { title: id, content: 'x' },
  });
  const steps = [...fan.map((id) => save(id, [])), save('after-s3', ['s3']), save('join', fan)];
  const settles: string[] = [];
  const ran: string[] = [];
  const { result, during } = await run(
    'taskRunWorkflow',
    [{ tenantId: 't', taskId: 'x', claim: { runKey: 'run_key', steps }, wakeLoop: true }],
    {
      taskSettleSteps: async (i: { stepIds: string[]; status: string }) =>
        void settles.push(`${i.status}:${i.stepIds.join(',')}`),
      taskFinishRun: async () => ({ finished: true }),
      taskStepSave: async (i: { stepId: string }) => {
        ran.push(i.stepId);
        if (i.stepId === 's3') throw ApplicationFailure.nonRetryable('broke', 'StepPermanentError');
        return { snippet: 'ok' };
      },
    },
    async (h) => {
      await h.result();
      return h.fetchHistory();
    },
  );
  expect(result).toEqual({ status: 'failed' });
  expect(ran.sort()).toEqual([...fan].sort());
  expect(settles).toEqual(['failed:s3', 'skipped:after-s3,join']);
  const scheduled = (during!.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes).length;
  expect(scheduled).toBe(30);
  await expect(replay(during!)).resolves.toBeUndefined();
});
