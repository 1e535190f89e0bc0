import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import { startQueueWorker, type Harness } from '../helpers/harness';
import { callsFor, completedBeforeLoss, expectEachStepOnce, startHeldGoalAndPad } from './job-test-utils';
import { pollUntil } from '../helpers/poll';

jest.setTimeout(180_000);

let fake: FakeOpenAI;
let h: Harness;
let key: string;
// No harness worker: this file starts and kills its own workers on the harness task queue.
withFakeUpstream({ scopes: ['runtime:chat'] }, (up) => ({ fake, h, key } = up));

test('a goal and a PAD session survive the worker dying mid-step; no completed step runs twice', async () => {
  let holding = true;
  let w = await startQueueWorker(h);
  const { goal, pad } = await startHeldGoalAndPad(h, fake, key, 'Durable goal', () => holding);
  const ids = [goal.id, pad.id];
  await w.stop(); // the worker goes away with both steps in flight
  holding = false;
  const completedBefore = await completedBeforeLoss(h.db, ids);
  // Nothing can run without a worker: the only one has stopped (no sleep needed to "see" it), and
  // the upstream has no request left open from it.
  expect(w.worker.getState()).toBe('STOPPED');
  await fake.waitFor(() => fake.inFlight === 0);

  w = await startQueueWorker(h);
  const g = await pollUntil(
    () => h.req('GET', `/v1/goals/${goal.id}`, { key }),
    (r) => r.body.status === 'completed',
    90_000,
  );
  const p = await pollUntil(
    () => h.req('GET', `/v1/pad/sessions/${pad.id}`, { key }),
    (r) => r.body.status === 'completed',
    90_000,
  );
  await w.stop();

  expect(g.body.plan.map((s: any) => s.output)).toEqual(['did goal one', 'did goal two HOLD', 'did goal three']);
  expect(p.body.summary).toMatchObject({ completed: 4, failed: 0 });
  // Steps that had completed before the worker died were never called again; the interrupted ones
  // were retried on the new worker and each completed exactly once.
  expect(callsFor(fake, 'goal two HOLD')).toBeGreaterThanOrEqual(2);
  await expectEachStepOnce(fake, h.db, ids, completedBefore);
});
