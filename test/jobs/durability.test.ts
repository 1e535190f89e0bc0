import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import { startQueueWorker, type Harness } from '../helpers/harness';
import { callsFor, lastUser, storedOutputs } from './job-test-utils';
import { pollUntil } from '../helpers/poll';

jest.setTimeout(180_000);

let fake: FakeOpenAI;
let h: Harness;
let key: string;
// No harness worker: this file starts and kills its own workers on the harness task queue.
withFakeUpstream({ scopes: ['runtime:chat'] }, (up) => ({ fake, h, key } = up));

test('a goal and a PAD session survive the worker dying mid-step; no completed step runs twice', async () => {
  let holding = true;
  fake.onRequest((r) => (holding && /HOLD/.test(lastUser(r)) ? { hang: true } : { reply: `did ${lastUser(r)}` }));
  let w = await startQueueWorker(h);

  const goal = await h.req('POST', '/v1/goals', {
    key,
    body: {
      title: 'Durable goal',
      steps: [
        { title: 'one', prompt: 'goal one' },
        { title: 'two', prompt: 'goal two HOLD' },
        { title: 'three', prompt: 'goal three' },
      ],
    },
  });
  const pad = await h.req('POST', '/v1/pad/dispatch', {
    key,
    body: {
      max_concurrency: 2,
      agents: [
        { name: 'a', prompt: 'pad a' },
        { name: 'b', prompt: 'pad b' },
        { name: 'c', prompt: 'pad c HOLD' },
        { name: 'd', prompt: 'pad d' },
      ],
    },
  });
  expect([goal.status, pad.status]).toEqual([200, 200]);

  // Both are mid-step: the held requests are in flight, earlier steps completed.
  await fake.waitFor(
    () =>
      fake.chats.some((c) => lastUser(c) === 'goal two HOLD') && fake.chats.some((c) => lastUser(c) === 'pad c HOLD'),
    30_000,
  );
  // PAD agents run two at a time: c starts when the first of a/b finishes, so wait until both stored.
  await pollUntil(
    () => storedOutputs(h.db, [goal.body.id, pad.body.id]),
    (o) => ['did goal one', 'did pad a', 'did pad b'].every((x) => o.includes(x)),
  );
  await w.stop(); // the worker goes away with both steps in flight
  holding = false;
  const completedBefore = (await storedOutputs(h.db, [goal.body.id, pad.body.id])).map((c) => c.replace(/^did /, ''));
  expect(completedBefore).toEqual(expect.arrayContaining(['goal one', 'pad a', 'pad b']));
  expect(completedBefore).not.toContain('goal two HOLD');
  expect(completedBefore).not.toContain('pad c HOLD');
  // Nothing can run without a worker: the only one has stopped (no sleep needed to "see" it), and
  // the upstream has no request left open from it.
  expect(w.worker.getState()).toBe('STOPPED');
  await fake.waitFor(() => fake.inFlight === 0);

  w = await startQueueWorker(h);
  const g = await pollUntil(
    () => h.req('GET', `/v1/goals/${goal.body.id}`, { key }),
    (r) => r.body.status === 'completed',
    90_000,
  );
  const p = await pollUntil(
    () => h.req('GET', `/v1/pad/sessions/${pad.body.id}`, { key }),
    (r) => r.body.status === 'completed',
    90_000,
  );
  await w.stop();

  expect(g.body.plan.map((s: any) => s.output)).toEqual(['did goal one', 'did goal two HOLD', 'did goal three']);
  expect(p.body.summary).toMatchObject({ completed: 4, failed: 0 });
  // Steps that had completed before the worker died were never called again.
  for (const prompt of completedBefore) expect({ prompt, calls: callsFor(fake, prompt) }).toEqual({ prompt, calls: 1 });
  // The interrupted ones were retried on the new worker and each completed exactly once.
  expect(callsFor(fake, 'goal two HOLD')).toBeGreaterThanOrEqual(2);
  expect(await storedOutputs(h.db, [goal.body.id, pad.body.id])).toEqual(
    ['goal one', 'goal three', 'goal two HOLD', 'pad a', 'pad b', 'pad c HOLD', 'pad d'].map((p) => `did ${p}`),
  );
});
