import { startChildWorker } from '../helpers/child-worker';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import { startQueueWorker, type Harness } from '../helpers/harness';
import { callsFor, completedBeforeLoss, expectEachStepOnce, startHeldGoalAndPad } from './job-test-utils';
import { pollUntil } from '../helpers/poll';

jest.setTimeout(120_000);

let fake: FakeOpenAI;
let h: Harness;
let key: string;
// No harness worker: the first worker is a child process this file kills with SIGKILL.
withFakeUpstream({ scopes: ['runtime:chat'] }, (up) => ({ fake, h, key } = up));

const startWorkerChild = () => startChildWorker(h, { OPENAI_BASE_URL: fake.url });

test('SIGKILL of the worker process mid-step: a goal and a PAD session finish on a new worker; no completed step runs twice', async () => {
  let holding = true;
  const child = await startWorkerChild();
  const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_code, signal) => r(signal)));
  const sov = await h.req('POST', '/v1/sovereign/goals', {
    key,
    body: { title: 'Idle sovereign', steps: [{ title: 'x', prompt: 'sov x' }] },
  });
  expect(sov.status).toBe(200);
  expect(sov.body.status).toBe('ready');
  const { goal, pad } = await startHeldGoalAndPad(h, fake, key, 'Crash goal', () => holding);
  const ids = [goal.id, pad.id];
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  holding = false;

  const completedBefore = await completedBeforeLoss(h.db, ids);

  // With no worker to answer queries, reads still answer (the query gives up at its deadline and
  // the stored rows answer); the rename is stored. How fast is a bench figure, not a test bound.
  const g = await h.req('GET', `/v1/goals/${goal.id}`, { key });
  expect(g.status).toBe(200);
  expect(g.body.progress.done).toBe(1);
  const s = await h.req('GET', `/v1/sovereign/goals/${sov.body.id}`, { key });
  expect(s.status).toBe(200);
  expect(s.body.status).toBe('ready');
  const put = await h.req('PUT', `/v1/goals/${goal.id}`, { key, body: { title: 'Crash goal (renamed)' } });
  expect(put.status).toBe(200);
  expect(put.body.title).toBe('Crash goal (renamed)');

  const w = await startQueueWorker(h);
  try {
    const gDone = await pollUntil(
      () => h.req('GET', `/v1/goals/${goal.id}`, { key }),
      (r) => r.body.status === 'completed',
      60_000,
    );
    const pDone = await pollUntil(
      () => h.req('GET', `/v1/pad/sessions/${pad.id}`, { key }),
      (r) => r.body.status === 'completed',
      60_000,
    );
    expect(gDone.body.title).toBe('Crash goal (renamed)');
    expect(gDone.body.plan.map((p: any) => p.output)).toEqual(['did goal one', 'did goal two HOLD', 'did goal three']);
    expect(pDone.body.summary).toMatchObject({ completed: 4, failed: 0 });
  } finally {
    await w.stop();
  }
  // Steps that had completed before the kill were never called again; the interrupted ones ran again, once each to completion.
  expect(callsFor(fake, 'goal two HOLD')).toBe(2);
  expect(callsFor(fake, 'pad c HOLD')).toBe(2);
  await expectEachStepOnce(fake, h.db, ids, completedBefore);
});
