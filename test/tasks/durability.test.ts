import { startQueueWorker, type Harness } from '../helpers/harness';
import { withReceiver, type Receiver } from './receiver';
import { openStream, until, type SseEvent } from './sse-client';
import { startExtraApp } from '../helpers/extra-app';

jest.setTimeout(180_000);

let h: Harness;
let rx: Receiver;
let key: string;

// No harness worker: this file starts and kills its own workers on the harness task queue.
withReceiver(
  { env: { SVC_ALLOW_PRIVATE_FETCH: 'true' } },
  (harness, receiver, k) => ((h = harness), (rx = receiver), (key = k)),
);

/** A second API instance on the same database: what "the API restarted" looks like. */
const startApi = () => startExtraApp(h);

test('a run survives the worker dying mid-step and the API restarting; completed steps ran once; SSE resumes', async () => {
  // `first` answers at once; `slow` holds the step open until the worker is killed (then answers normally).
  rx.route('/k/slow', { hang: true });
  const hook = (id: string, path: string, deps: string[] = []) => ({
    id,
    title: id,
    action: 'webhook',
    args: { url: `${rx.url}${path}`, secret: 's' },
    depends_on: deps,
  });
  const t = (
    await h.req('POST', '/v1/tasks', {
      key,
      body: {
        title: 'durable',
        steps: [hook('first', '/k/first'), hook('slow', '/k/slow', ['first']), hook('last', '/k/last', ['slow'])],
      },
    })
  ).body;

  let w = await startQueueWorker(h);
  const apiA = await startApi();
  // Stream from API instance A until the slow step is running.
  const seenA = await openStream(`${apiA.url}/v1/tasks/${t.id}/execute`, {
    key,
    onEvent: (e) => e.data.step_id === 'slow' && e.data.status === 'running',
  });
  expect(seenA.events.map((e) => `${e.data.step_id}:${e.data.status}`)).toEqual([
    'first:running',
    'first:completed',
    'slow:running',
  ]);
  await rx.waitFor(() => rx.on('/k/slow').length === 1);

  // Kill the worker while `slow` is in flight, and take API instance A down.
  await w.stop();
  await apiA.close();
  expect(rx.on('/k/slow')[0].closedEarly).toBe(true);
  expect((await h.req('GET', `/v1/tasks/${t.id}`, { key })).body.status).toBe('running');

  // A new worker on the same task queue, a new API instance; the client resumes from its last id.
  rx.route('/k/slow', {});
  w = await startQueueWorker(h);
  const apiB = await startApi();
  const lastSeen = seenA.events[seenA.events.length - 1].id;
  const seenB = await openStream(`${apiB.url}/v1/tasks/${t.id}/execute`, { key, lastEventId: lastSeen });
  const all: SseEvent[] = [...seenA.events, ...seenB.events];
  const ids = all.map((e) => Number(e.id));
  expect(new Set(ids).size).toBe(ids.length); // no duplicates
  expect([...ids].sort((a, b) => a - b)).toEqual(ids); // in order
  expect(all.filter((e) => !e.data.done).map((e) => `${e.data.step_id}:${e.data.status}`)).toEqual([
    'first:running',
    'first:completed',
    'slow:running',
    'slow:completed',
    'last:running',
    'last:completed',
  ]);
  expect(all[all.length - 1].data).toMatchObject({ done: true, status: 'completed' });

  const done = await until(async () => {
    const r = await h.req('GET', `/v1/tasks/${t.id}`, { key });
    return r.body.status === 'completed' ? r.body : null;
  });
  const s = Object.fromEntries(done.steps.map((x: any) => [x.id, x]));
  // Steps completed before the kill ran exactly once; the interrupted one ran again.
  expect(rx.on('/k/first')).toHaveLength(1);
  expect(s.first.attempts).toBe(1);
  expect(rx.on('/k/slow')).toHaveLength(2);
  expect(s.slow.attempts).toBe(2);
  expect(rx.on('/k/last')).toHaveLength(1);
  expect(s.last.attempts).toBe(1);
  // Both deliveries of the interrupted step carry the same idempotency key, so a receiver can dedupe.
  expect(rx.on('/k/slow')[0].headers['idempotency-key']).toBe(rx.on('/k/slow')[1].headers['idempotency-key']);
  // One workflow execution did it all (its final bookkeeping may land just after the row says completed).
  const handle = h.client.workflow.getHandle(`task-${t.id}`);
  await handle.result();
  const desc = await handle.describe();
  expect(desc.status.name).toBe('COMPLETED');
  await w.stop();
  await apiB.close();
});

test('the worker dies mid-fan-out: every step that completed before is recorded once and never re-run; the rest finish', async () => {
  for (const p of ['/f/hold1', '/f/hold2']) rx.route(p, { hang: true });
  const hook = (id: string, deps: string[] = []) => ({
    id,
    title: id,
    action: 'webhook',
    args: { url: `${rx.url}/f/${id}`, secret: 's' },
    depends_on: deps,
  });
  const fan = ['quick1', 'quick2', 'quick3', 'hold1', 'hold2'];
  const t = (
    await h.req('POST', '/v1/tasks', {
      key,
      body: { title: 'fan crash', steps: [...fan.map((id) => hook(id)), hook('join', fan)] },
    })
  ).body;

  let w = await startQueueWorker(h);
  const quick = new Set<string>();
  await openStream(`${h.url}/v1/tasks/${t.id}/execute`, {
    key,
    onEvent: (e) => {
      if (e.data.status === 'completed') quick.add(e.data.step_id);
      return quick.size === 3;
    },
  });
  expect([...quick].sort()).toEqual(['quick1', 'quick2', 'quick3']);
  await rx.waitFor(() => rx.on('/f/hold1').length === 1 && rx.on('/f/hold2').length === 1);
  await w.stop(); // mid-fan-out: two steps in flight

  for (const p of ['/f/hold1', '/f/hold2']) rx.route(p, {});
  w = await startQueueWorker(h);
  const rest = await openStream(`${h.url}/v1/tasks/${t.id}/execute`, { key, method: 'GET', lastEventId: '0' });
  await w.stop();
  const completed = rest.events
    .filter((e) => e.data.status === 'completed' && !e.data.done)
    .map((e) => e.data.step_id as string);
  // Each step's completion is recorded exactly once, whichever worker ran it.
  expect([...completed].sort()).toEqual([...fan, 'join'].sort());
  expect(rest.events.at(-1)?.data).toMatchObject({ done: true, status: 'completed' });
  for (const q of ['quick1', 'quick2', 'quick3', 'join']) expect(rx.on(`/f/${q}`)).toHaveLength(1);
  for (const q of ['hold1', 'hold2']) expect(rx.on(`/f/${q}`)).toHaveLength(2);
  const steps = (await h.req('GET', `/v1/tasks/${t.id}`, { key })).body.steps as Array<{
    id: string;
    status: string;
    attempts: number;
  }>;
  expect(steps.map((s) => [s.id, s.status])).toEqual([...fan, 'join'].map((id) => [id, 'completed']));
  expect(steps.filter((s) => s.id.startsWith('quick')).map((s) => s.attempts)).toEqual([1, 1, 1]);
});
