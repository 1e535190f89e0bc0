import pino from 'pino';
import { sql } from 'slonik';
import { startBrowserWorkers, type BrowserWorkers } from '../../workers/browser-worker';
import { testEnv } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';
import { withBrowser, type BrowserFixture } from './browser-harness';
import { startChild } from './spawn-worker';

jest.setTimeout(240_000);

let f: BrowserFixture;
// Owner checks every second, so a killed worker is noticed without any command.
withBrowser({ browserWorker: false, env: { SVC_BROWSER_HEARTBEAT_S: '1' } }, (x) => (f = x));

let replacement: BrowserWorkers | undefined;
afterAll(() => replacement?.stop());

const pool = async () => (await f.h.req('GET', '/v1/daemons', { key: f.key })).body.browser_pool;
const row = async (id: string) => (await f.h.req('GET', `/v1/browser/sessions/${id}`, { key: f.key })).body;

test('heartbeat: a killed owner is noticed with no command sent; the session goes recovering, then re-opens on another worker', async () => {
  const { child, workerId } = await startChild(f);
  const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_c, signal) => r(signal)));
  const before = await pool();
  expect(before.workers).toContainEqual(
    expect.objectContaining({ worker_id: workerId, status: 'up', sessions_open: 0, capacity: 8 }),
  );
  expect(before.workers.find((w: any) => w.worker_id === workerId).chromium_version).toMatch(/Chromium \d+/);
  const id = await f.session();
  await f.open(id, '/login');
  expect(await row(id)).toMatchObject({ status: 'open', worker_id: workerId, recoveries: 0 });
  // The checkpoint (written once the session is quiet) holds the page before the kill.
  await pollUntil(
    () =>
      f.h.db.maybeOneFirst(sql.unsafe`SELECT url FROM browser_sessions WHERE id = ${id} AND checkpoint_at IS NOT NULL`),
    (u) => String(u).endsWith('/login'),
  );

  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  // No command from here on: only the session workflow's heartbeat can change the status.
  await pollUntil(
    () => row(id),
    (r) => r.status === 'recovering',
    120_000,
  );

  replacement = await startBrowserWorkers({
    config: f.h.config,
    db: f.h.db,
    log: pino({ level: 'silent' }),
    address: testEnv().temporalAddress,
    taskQueue: f.h.taskQueue,
  });
  const back = await pollUntil(
    () => row(id),
    (r) => r.status === 'open' && r.recoveries === 1,
    120_000,
  );
  expect(back.worker_id).toBe(replacement!.workerId);
  expect(replacement!.host.sessions.has(id)).toBe(true);
  // Re-opened from its checkpoint at the same page, before any command asked for it.
  expect(replacement!.host.sessions.get(id)!.page.url()).toBe(`${f.pages.url}/login`);
  const snap = await f.snapshot(id);
  expect(snap.status).toBe(200);

  // GET /v1/daemons: the new worker holds the session; the killed one stops reporting and goes stale.
  const after = await pollUntil(
    pool,
    (p) => p.workers.some((w: any) => w.worker_id === workerId && w.status === 'stale'),
    120_000,
  );
  expect(after.workers.find((w: any) => w.worker_id === replacement!.workerId)).toMatchObject({
    status: 'up',
    sessions_open: 1,
  });
  expect(after).toMatchObject({ status: 'up', sessions_open: 1, capacity: 8 });
  expect(after.pollers).toBeGreaterThan(0);
});
