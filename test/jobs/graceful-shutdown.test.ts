import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { closeServer, serveApi } from '../../workers/runtime';
import { startQueueWorker, type Harness } from '../helpers/harness';
import { withReceiver, type Receiver } from '../tasks/receiver';
import { openStream, type SseEvent } from '../tasks/sse-client';
import { pollUntil } from '../helpers/poll';

jest.setTimeout(120_000);

let h: Harness;
let rx: Receiver;
let key: string;
// No harness worker: each test starts the workers it needs on the harness task queue.
withReceiver(
  { env: { SVC_ALLOW_PRIVATE_FETCH: 'true' } },
  (harness, receiver, k) => ((h = harness), (rx = receiver), (key = k)),
);

const hook = (id: string, path: string, deps: string[] = []) => ({
  id,
  title: id,
  action: 'webhook',
  args: { url: `${rx.url}${path}`, secret: 's' },
  depends_on: deps,
});

async function createTask(title: string, steps: unknown[]): Promise<string> {
  const r = await h.req('POST', '/v1/tasks', { key, body: { title, steps } });
  expect(r.status).toBe(201);
  return r.body.id;
}

test('SIGTERM on an API process: SSE streams end with a retry hint and resume elsewhere with Last-Event-ID, losing nothing', async () => {
  rx.route('/g/slow', { hang: true });
  const id = await createTask('drain', [hook('first', '/g/first'), hook('slow', '/g/slow', ['first'])]);
  const worker = await startQueueWorker(h);
  // The API process that will be stopped: the production server path (serveApi), on a free port.
  const server = await serveApi({
    config: { ...h.config, port: 0, host: '127.0.0.1' },
    db: h.db,
    log: pino({ level: 'silent' }),
    temporal: { connection: h.connection, client: h.client },
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let closing: Promise<void> | undefined;
  const first = await openStream(`${url}/v1/tasks/${id}/execute`, {
    key,
    onEvent: (e) => {
      if (e.data?.step_id === 'slow' && e.data?.status === 'running') closing ??= closeServer(server, 30_000);
    },
  });
  await closing;
  // The stream ended cleanly (no reset) with the hint, before the run was done.
  expect(first.comments).toContain('server shutting down; reconnect with Last-Event-ID');
  expect(first.events.some((e) => e.data?.done)).toBe(false);
  const lastId = first.events.at(-1)!.id!;

  // The other replica carries on from the last event id: the rest arrives once, in order.
  rx.route('/g/slow', {});
  const rest = await openStream(`${h.url}/v1/tasks/${id}/execute`, {
    method: 'GET',
    key,
    lastEventId: lastId,
    onEvent: (e) => e.data?.done === true,
  });
  const ids = [...first.events, ...rest.events].map((e: SseEvent) => Number(e.id));
  expect(new Set(ids).size).toBe(ids.length);
  expect(ids).toEqual([...ids].sort((a, b) => a - b));
  expect(rest.events.at(-1)!.data.done).toBe(true);
  expect(rest.events.at(-1)!.data.task.steps.map((s: { status: string }) => s.status)).toEqual([
    'completed',
    'completed',
  ]);
  // The drained server accepts nothing new.
  await expect(fetch(`${url}/v1/health`)).rejects.toThrow();
  await worker.stop();
});

test('SIGTERM on a worker: an activity in flight finishes within the grace period and is not run again', async () => {
  rx.route('/w/slow', { delayMs: 1500 });
  const id = await createTask('grace', [hook('slow', '/w/slow')]);
  const graceful = await startQueueWorker({ ...h, config: { ...h.config, workerShutdownGraceMs: 20_000 } });
  const run = await h.req('POST', `/v1/tasks/${id}/execute`, { key });
  expect(run.status).toBeLessThan(300);
  await rx.waitFor(() => rx.on('/w/slow').length === 1, 30_000);
  // Stop while the webhook is in flight: the worker waits for it instead of cancelling it.
  await graceful.stop();
  expect(rx.on('/w/slow')[0].closedEarly).toBe(false);
  const next = await startQueueWorker(h);
  const done = await pollUntil(
    () => h.req('GET', `/v1/tasks/${id}`, { key }),
    (r) => r.body.steps?.[0]?.status === 'completed',
    60_000,
  );
  expect(done.body.steps[0].status).toBe('completed');
  expect(rx.on('/w/slow')).toHaveLength(1);
  await next.stop();
});
