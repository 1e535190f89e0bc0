import { sql } from 'slonik';
import { z } from 'zod';
import { startChildWorker } from '../helpers/child-worker';
import { startHarness, startQueueWorker, type Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';
import { startReceiver, type Receiver } from './receiver';

jest.setTimeout(180_000);

let h: Harness;
let key: string;
let rx: Receiver;
// No harness worker: the first worker is a child process this file kills with SIGKILL.
beforeAll(async () => {
  h = await startHarness({ env: { SVC_ALLOW_PRIVATE_FETCH: 'true' } });
  key = (await h.key(['runtime:chat'])).apiKey;
  rx = await startReceiver();
});
afterAll(async () => {
  await rx?.close();
  await h?.close();
});

const stored = (runId: string) =>
  h.db.anyFirst(sql.type(z.object({ step_id: z.string() }))`
    SELECT step_id FROM tool_plan_results WHERE run_id = ${runId} AND status = 'completed' ORDER BY step_id`);

test('SIGKILL of the worker mid-plan: the run finishes on a new worker; every completed step ran once, the interrupted one once to completion', async () => {
  rx.hold('/two');
  const child = await startChildWorker(h, { SVC_ALLOW_PRIVATE_FETCH: 'true' });
  const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_c, signal) => r(signal)));
  const created = await h.req('POST', '/v1/tools/plan', {
    key,
    body: {
      goal: 'crash',
      steps: [
        { id: 's1', tool: 'web_fetch', args: { url: `${rx.url}/one` } },
        { id: 's1b', tool: 'web_fetch', args: { url: `${rx.url}/one-b` } },
        { id: 's2', tool: 'web_fetch', args: { url: `${rx.url}/two` }, depends_on: ['s1', 's1b'] },
        { id: 's3', tool: 'web_fetch', args: { url: `${rx.url}/three?t={{steps.s2.result.title}}` } },
      ],
    },
  });
  expect(created.status).toBe(201);
  const started = await h.req('POST', '/v1/tools/execute-plan', { key, body: { plan_id: created.body.id } });
  expect(started.status).toBe(202);
  const runId = started.body.id;

  // Mid-plan: s1 and s1b stored, s2's request is in flight at the receiver.
  await pollUntil(
    async () => ({ rows: await stored(runId), two: rx.received('/two') }),
    (s) => s.rows.length === 2 && s.two === 1,
    60_000,
  );
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  rx.release('/two');

  const w = await startQueueWorker(h);
  try {
    const done = await pollUntil(
      () => h.req('GET', `/v1/tools/plans/runs/${runId}`, { key }),
      (r) => r.body.status === 'completed',
      120_000,
    );
    expect(done.body.steps.map((s: any) => s.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
  } finally {
    await w.stop();
  }
  expect(await stored(runId)).toEqual(['s1', 's1b', 's2', 's3']);
  // Completed steps never ran again; the interrupted one was answered once (its first request died with the worker).
  expect({ one: rx.received('/one'), oneB: rx.received('/one-b'), three: rx.received('/three') }).toEqual({
    one: 1,
    oneB: 1,
    three: 1,
  });
  expect({ received: rx.received('/two'), delivered: rx.delivered('/two') }).toEqual({ received: 2, delivered: 1 });
  const events = await h.db.anyFirst(sql.type(z.object({ type: z.string() }))`
    SELECT type FROM events WHERE stream = ${`plan:${runId}`} AND type = 'step'`);
  expect(events).toHaveLength(4);
});
