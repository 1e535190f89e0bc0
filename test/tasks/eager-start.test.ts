import { Client } from '@temporalio/client';
import type { NativeConnection, Worker } from '@temporalio/worker';
import pino from 'pino';
import { createRuntimeWorker } from '../../workers/runtime-worker';
import { startExtraApp, type ExtraApp } from '../helpers/extra-app';
import { startHarness, testEnv, type Harness } from '../helpers/harness';
import { until } from './sse-client';

// The all-in-one process (`npm start`) starts workflows through its own worker's connection with
// Eager Workflow Start: the server hands the first workflow task straight back to that worker.
jest.setTimeout(120_000);

let h: Harness;
let app: ExtraApp;
let worker: Worker;
let connection: NativeConnection;
let running: Promise<void>;
let eager: Client;

beforeAll(async () => {
  h = await startHarness({ worker: false });
  ({ worker, connection } = await createRuntimeWorker({
    config: h.config,
    db: h.db,
    log: pino({ level: 'silent' }),
    address: testEnv().temporalAddress,
    taskQueue: h.taskQueue,
    bundlePath: testEnv().bundlePath,
  }));
  running = worker.run();
  eager = new Client({ connection, namespace: h.config.temporal.namespace });
  app = await startExtraApp(h, { eager });
});
afterAll(async () => {
  await app?.close();
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running;
  await connection?.close();
  await h?.close();
});

test('a task run is started eagerly on the in-process worker and runs to completion', async () => {
  const start = jest.spyOn(eager.workflow, 'start');
  const { apiKey: key } = await h.key(['runtime:records']);
  const req = (method: string, path: string, body?: unknown) =>
    fetch(`${app.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  const created = await req('POST', '/v1/tasks', {
    title: 'eager',
    steps: [
      { id: 'a', title: 'a', action: 'save', args: { content: 'first' } },
      { id: 'b', title: 'b', action: 'save', args: { content: 'second' }, depends_on: ['a'] },
    ],
  });
  expect(created.status).toBe(201);
  expect((await req('POST', `/v1/tasks/${created.body.id}/execute`)).status).toBe(202);
  // The start went through the worker's client, asked for eagerly, and the server granted it.
  expect(start).toHaveBeenCalledTimes(1);
  expect(start.mock.calls[0][1]).toMatchObject({ requestEagerStart: true, taskQueue: h.taskQueue });
  const handle = await start.mock.results[0].value;
  expect(handle.eagerlyStarted).toBe(true);
  const done = await until(async () => {
    const t = (await req('GET', `/v1/tasks/${created.body.id}`)).body;
    return t.status === 'completed' || t.status === 'failed' ? t : null;
  }, 60_000);
  expect(done.status).toBe('completed');
  expect(done.steps.map((s: { status: string }) => s.status)).toEqual(['completed', 'completed']);
  // A second run of the same task (new work appended) reuses the workflow id of the closed first run:
  // started eagerly as well, and it runs the new step.
  expect(
    (
      await req('POST', `/v1/tasks/${created.body.id}/steps`, {
        id: 'c',
        title: 'c',
        action: 'save',
        args: { content: 'third' },
      })
    ).status,
  ).toBe(201);
  expect((await req('POST', `/v1/tasks/${created.body.id}/execute`)).status).toBe(202);
  expect(start).toHaveBeenCalledTimes(2);
  expect((await start.mock.results[1].value).eagerlyStarted).toBe(true);
  const again = await until(async () => {
    const t = (await req('GET', `/v1/tasks/${created.body.id}`)).body;
    return t.status === 'completed' || t.status === 'failed' ? t : null;
  }, 60_000);
  expect(again.status).toBe('completed');
  expect(again.steps.map((s: { id: string; status: string }) => `${s.id}:${s.status}`)).toEqual([
    'a:completed',
    'b:completed',
    'c:completed',
  ]);
});

test('without a worker in the process, starts take the API client as before (not eager)', async () => {
  const plain = await startExtraApp(h);
  const start = jest.spyOn(h.client.workflow, 'start');
  try {
    const { apiKey: key } = await h.key(['runtime:records']);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const t = (await (
      await fetch(`${plain.url}/v1/tasks`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          title: 'plain',
          steps: [{ id: 'a', title: 'a', action: 'save', args: { content: 'x' } }],
        }),
      })
    ).json()) as { id: string };
    expect((await fetch(`${plain.url}/v1/tasks/${t.id}/execute`, { method: 'POST', headers })).status).toBe(202);
    expect(start).toHaveBeenCalledTimes(1);
    expect(start.mock.calls[0][1]).not.toHaveProperty('requestEagerStart');
    expect((await start.mock.results[0].value).eagerlyStarted).toBe(false);
    // The worker of this file still runs it (same task queue).
    await until(async () => {
      const r = (await (await fetch(`${plain.url}/v1/tasks/${t.id}`, { headers })).json()) as { status: string };
      return r.status === 'completed' ? r : null;
    }, 60_000);
  } finally {
    start.mockRestore();
    await plain.close();
  }
});
