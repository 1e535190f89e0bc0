import { ApplicationFailure } from '@temporalio/common';
import { mockedWorkflows } from './mocked-worker';

// The DAG workflow alone against the real dev server, with its activities mocked: no database.
jest.setTimeout(120_000);

type Settle = { stepIds: string[]; status: string };
const { run } = mockedWorkflows();

/** Runs the workflow over `plan` with mocked activities; `fail` names the steps whose action fails permanently. */
async function runDag(
  loop: { wakeLoop?: true },
  plan: Array<{ id: string; depends_on: string[] }>,
  fail: string[] = [],
  barrier = 1,
) {
  let inflight = 0;
  let peak = 0;
  const settled: Settle[] = [];
  const ran: string[] = [];
  let release!: () => void;
  const together = new Promise<void>((r) => (release = r));
  const step = async (i: { stepId: string }) => {
    inflight++;
    peak = Math.max(peak, inflight);
    // The first `barrier` steps finish only once they all run at the same time: serial steps would never get there.
    if (peak >= barrier) release();
    await together;
    inflight--;
    ran.push(i.stepId);
    if (fail.includes(i.stepId)) throw ApplicationFailure.nonRetryable(`step ${i.stepId} broke`, 'StepPermanentError');
    return { snippet: 'ok' };
  };
  const { result, error } = await run('taskDagWorkflow', [{ tenantId: 't', taskId: 'x', ...loop }], {
    taskBeginRun: async () => plan.map((p) => ({ ...p, action: 'save', status: 'pending' })),
    taskSettleSteps: async (i: Settle) => void settled.push({ stepIds: i.stepIds, status: i.status }),
    taskFinishRun: async () => ({ finished: true }),
    taskStepSave: step,
  });
  if (error) throw error;
  return { result, peak, settled, ran };
}

// Both run loops: the race over every step in flight (runs started before `wakeLoop`, which replay with it)
// and the one wake-up promise per turn that the API's runs use now.
describe.each([
  ['the race loop (earlier runs)', {}],
  ['the wake loop', { wakeLoop: true as const }],
])('%s', (_name, loop: { wakeLoop?: true }) => {
  test('independent steps run in parallel; the join waits for all of them', async () => {
    const r = await runDag(
      loop,
      [
        { id: 'a', depends_on: [] },
        { id: 'b', depends_on: [] },
        { id: 'c', depends_on: [] },
        { id: 'join', depends_on: ['a', 'b', 'c'] },
      ],
      [],
      3,
    );
    expect(r.result).toEqual({ status: 'completed' });
    expect(r.peak).toBe(3);
    expect(r.ran.at(-1)).toBe('join');
  });

  test('a failed step skips its dependants, the others still run, and the task ends failed', async () => {
    const r = await runDag(
      loop,
      [
        { id: 'a', depends_on: [] },
        { id: 'b', depends_on: [] },
        { id: 'after-a', depends_on: ['a'] },
        { id: 'after-b', depends_on: ['b'] },
      ],
      ['a'],
    );
    expect(r.result).toEqual({ status: 'failed' });
    expect(r.ran.sort()).toEqual(['a', 'after-b', 'b']);
    expect(r.settled).toEqual([
      { stepIds: ['a'], status: 'failed' },
      { stepIds: ['after-a'], status: 'skipped' },
    ]);
  });
});
