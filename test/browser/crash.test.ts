import pino from 'pino';
import { sql } from 'slonik';
import { startBrowserWorkers, type BrowserWorkers } from '../../workers/browser-worker';
import { testEnv } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';
import { refOf, withBrowser, type BrowserFixture } from './browser-harness';
import { startChild } from './spawn-worker';

jest.setTimeout(180_000);

let f: BrowserFixture;
// No in-process browser worker: the first one is a child process this file kills with SIGKILL.
withBrowser({ browserWorker: false }, (x) => (f = x));

let replacement: BrowserWorkers | undefined;
afterAll(() => replacement?.stop());

test('SIGKILL of the browser worker mid-session: the session recovers on a new worker from its checkpoint and the next command succeeds', async () => {
  const { child, workerId } = await startChild(f);
  const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_c, signal) => r(signal)));
  const id = await f.session();
  expect((await f.h.req('GET', `/v1/browser/sessions/${id}`, { key: f.key })).body.worker_id).toBe(workerId);
  await f.open(id, '/login');
  await f.act(id, { action: 'click', ref: refOf((await f.snapshot(id)).body.text, /button "Log in"/) });
  await f.act(id, { action: 'wait_for', text: 'in' });
  const buttonRef = refOf((await f.snapshot(id)).body.text, /button "Log in"/);
  // The checkpoint (written once the session is quiet) holds the login before the kill: its localStorage token and its
  // IndexedDB record. The record is committed after the click's handler returns: a checkpoint written just after the
  // click (a loaded machine) can hold the token without it, and the wait_for's checkpoint that follows holds both.
  await pollUntil(
    () => f.h.db.maybeOneFirst(sql.unsafe`SELECT checkpoint FROM browser_sessions WHERE id = ${id}`),
    (c) => String(c).includes('t-123') && String(c).includes('idb-ok'),
  );

  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  const fresh = await startBrowserWorkers({
    config: f.h.config,
    db: f.h.db,
    log: pino({ level: 'silent' }),
    address: testEnv().temporalAddress,
    taskQueue: f.h.taskQueue,
  });
  replacement = fresh;

  // The next command: an action by the ref taken before the crash works on the re-opened page.
  const next = await f.act(id, { action: 'hover', ref: buttonRef });
  expect(next.status).toBe(200);
  expect(next.body.url).toBe(`${f.pages.url}/login`);
  const row = (await f.h.req('GET', `/v1/browser/sessions/${id}`, { key: f.key })).body;
  expect(row).toMatchObject({ status: 'open', worker_id: fresh!.workerId, recoveries: 1 });
  expect(fresh!.host.sessions.has(id)).toBe(true);

  // Cookies, localStorage and IndexedDB came back from the checkpoint.
  await f.open(id, '/account');
  await f.act(id, { action: 'wait_for', text: 'account cookie:yes' });
  expect((await f.snapshot(id)).body.text).toContain('account cookie:yes ls:t-123 idb:idb-ok');
});
