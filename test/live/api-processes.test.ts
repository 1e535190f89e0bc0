import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { publishDispatch } from '../../activities/live/publish';
import { createDb, type Db } from '../../activities/store/db';
import { freePort } from '../../workers/temporal-dev';
import { freshDatabase, testEnv } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';
import { client, until, type TestClient } from './ws-helpers';
import { processAlive } from '../helpers/processes';

/**
 * The real API entry (workers/api.ts) with SVC_API_PROCESSES=2: one primary, two API processes sharing its
 * port through node:cluster. The processes are found by the pids the primary logs.
 */
const ROOT = path.resolve(__dirname, '../..');
let database: Awaited<ReturnType<typeof freshDatabase>>;
let db: Db;
let primary: ChildProcess;
let port: number;
const logs: Array<{ msg?: string; pid?: number; process?: number }> = [];
let output = '';

const readyPids = () => logs.filter((l) => l.msg === 'api process ready' && l.pid).map((l) => l.pid!);
const alive = processAlive;
const dispatchFrame = (c: TestClient, action: string) =>
  until(c.frames, (f) => f.type === 'agent_dispatch' && f.action === action);

beforeAll(async () => {
  database = await freshDatabase();
  db = await createDb({ url: database.url, maxConnections: 2 });
  port = await freePort();
  primary = spawn(process.execPath, ['-r', path.join(ROOT, 'bin/ts-register.js'), path.join(ROOT, 'workers/api.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: testEnv().temporalAddress,
      SVC_API_PROCESSES: '2',
      SVC_LOG_LEVEL: 'info',
      SVC_LOG_FORMAT: 'json',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let partial = '';
  primary.stdout!.on('data', (d: Buffer) => {
    output = (output + d.toString()).slice(-20_000);
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines)
      try {
        logs.push(JSON.parse(line));
      } catch {
        // not a log line
      }
  });
  primary.stderr!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  await pollUntil(
    async () => primary.exitCode ?? logs.some((l) => l.msg === 'svc api ready'),
    (v) => v === true || typeof v === 'number',
    120_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n${output}`);
  });
  if (primary.exitCode !== null) throw new Error(`the API primary exited: ${output}`);
}, 150_000);

afterAll(async () => {
  if (primary && primary.exitCode === null && primary.signalCode === null) {
    primary.kill('SIGKILL');
    await new Promise((r) => primary.once('exit', r));
  }
  // A process whose primary died exits by itself (node:cluster); make sure none outlives the test.
  for (const pid of readyPids()) if (alive(pid)) process.kill(pid, 'SIGKILL');
  await db?.end();
  await database?.drop();
});

test('two API processes on one port both take WebSocket clients, and every client gets each broadcast', async () => {
  expect(readyPids()).toHaveLength(2);
  const clients: TestClient[] = [];
  for (let i = 0; i < 6; i++) clients.push(await client(`ws://127.0.0.1:${port}/v1/ws`));

  await publishDispatch(db, 'shared');
  for (const c of clients)
    expect(await dispatchFrame(c, 'shared')).toEqual({ type: 'agent_dispatch', action: 'shared' });

  // GET /v1/metrics on any process sums every process's series: all six clients, wherever they landed.
  const metrics = await fetch(`http://127.0.0.1:${port}/v1/metrics`).then((r) => r.text());
  expect(metrics).toMatch(/^svc_ws_connections 6$/m);

  // Killing one process closes its clients only: so both processes held some.
  const [first] = readyPids();
  process.kill(first, 'SIGKILL');
  const codes = await Promise.all(
    clients.map((c) => Promise.race([c.closed, new Promise<string>((r) => setTimeout(() => r('open'), 3000))])),
  );
  const closed = clients.filter((_, i) => codes[i] !== 'open');
  const open = clients.filter((_, i) => codes[i] === 'open');
  expect(closed.length).toBeGreaterThan(0);
  expect(open.length).toBeGreaterThan(0);
  await publishDispatch(db, 'after-kill');
  for (const c of open) await dispatchFrame(c, 'after-kill');
  for (const c of open) c.ws.close();
});

test('a killed API process is replaced, and the replacement serves', async () => {
  const [killed, survivor] = readyPids();
  expect(alive(killed)).toBe(false);
  const replacement = (await pollUntil(
    async () => readyPids().find((p) => p !== killed && p !== survivor),
    (p) => p !== undefined,
    120_000,
  ))!;
  expect(alive(replacement)).toBe(true);
  // With the survivor gone too, only the replacement can take this client (its own replacement is a second away).
  process.kill(survivor, 'SIGKILL');
  await pollUntil(
    async () => alive(survivor),
    (a) => !a,
  );
  const c = await client(`ws://127.0.0.1:${port}/v1/ws`);
  await publishDispatch(db, 'from-replacement');
  await dispatchFrame(c, 'from-replacement');
  c.ws.close();
});

test('SIGTERM to the primary drains every process: clients are told 1001 (going away), then all exit', async () => {
  await pollUntil(
    async () => new Set(readyPids().filter(alive)).size,
    (n) => n === 2,
    120_000,
  );
  const pids = readyPids().filter(alive);
  const clients: TestClient[] = [];
  for (let i = 0; i < 4; i++) clients.push(await client(`ws://127.0.0.1:${port}/v1/ws`));
  const exited = new Promise<number | null>((r) => primary.once('exit', (code) => r(code)));
  primary.kill('SIGTERM');
  expect(await Promise.all(clients.map((c) => c.closed))).toEqual([1001, 1001, 1001, 1001]);
  expect(await exited).toBe(0);
  for (const pid of pids) expect(alive(pid)).toBe(false);
});
