import { request } from 'undici';
import { browserWorkerEndpoint } from '../../activities/store/browser-workers';
import { browserWorkflowId } from '../../api/browser-client';
import { BROWSER_DIRECT_PATH, browserStateQuery } from '../../workflows/browser-defs';
import { pollUntil } from '../helpers/poll';
import { refOf, withBrowser, type BrowserFixture } from './browser-harness';

jest.setTimeout(150_000);

let f: BrowserFixture;
withBrowser({}, (x) => (f = x));

/** How many commands the session workflow ran itself (updates accepted, the opening one excluded). */
async function workflowCommands(id: string): Promise<number> {
  const history = await f.h.client.workflow.getHandle(browserWorkflowId(id)).fetchHistory();
  const ran = (history.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
  return ran.filter((e) =>
    JSON.stringify(e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name).includes(
      'browserCommand',
    ),
  ).length;
}

const row = async (id: string) => (await f.h.req('GET', `/v1/browser/sessions/${id}`, { key: f.key })).body;

test('commands go straight to the owning worker; the workflow hears of them by signal once the session is quiet', async () => {
  const id = await f.session();
  expect((await f.open(id, '/form')).status).toBe(200);
  const snap = await f.snapshot(id);
  expect(snap.status).toBe(200);
  const act = await f.act(id, { action: 'click', ref: refOf(snap.body.text, /button "Press me"/) });
  expect(act.status).toBe(200);
  expect(await workflowCommands(id)).toBe(0);
  // The signal (after the quiet period) brings the workflow's view up to date: URL and refs.
  const state = await pollUntil(
    () => f.h.client.workflow.getHandle(browserWorkflowId(id)).query(browserStateQuery),
    (s) => s.url === `${f.pages.url}/form` && s.refs.length > 0,
  );
  expect(state.status).toBe('open');
});

test('the command endpoint wants the worker token and serves only the session’s tenant', async () => {
  const id = await f.session();
  const ep = await browserWorkerEndpoint(f.h.db, f.bw!.workerId);
  expect(ep).not.toBeNull();
  const body = JSON.stringify({
    sessionId: id,
    tenantId: f.tenantId,
    cmd: { op: 'snapshot', maxChars: 1000, diff: false },
    expiresAt: Date.now() + 60_000,
  });
  const send = async (auth: string, b = body) => {
    const r = await request(ep!.endpoint + BROWSER_DIRECT_PATH, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: b,
    });
    return { status: r.statusCode, body: (await r.body.json()) as any };
  };
  expect((await send('Bearer wrong')).status).toBe(401);
  expect((await send('')).status).toBe(401);
  const ok = await send(`Bearer ${ep!.token}`);
  expect(ok).toMatchObject({ status: 200, body: { ok: true, result: { url: 'about:blank' } } });
  const other = await send(`Bearer ${ep!.token}`, body.replace(f.tenantId, 'ten_someone_else'));
  expect(other).toMatchObject({ status: 200, body: { ok: false, type: 'SessionLost' } });
  // The token is never listed by GET /v1/daemons.
  expect(JSON.stringify((await f.h.req('GET', '/v1/daemons', { key: f.key })).body)).not.toContain(ep!.token);
});

test('concurrent commands on one session run one at a time', async () => {
  const id = await f.session();
  await f.open(id, '/form');
  const ref = refOf((await f.snapshot(id)).body.text, /textbox "Name"/);
  const words = ['aaaa', 'bbbb', 'cccc', 'dddd'];
  const typed = await Promise.all(words.map((text) => f.act(id, { action: 'type', ref, text })));
  expect(typed.map((r) => r.status)).toEqual([200, 200, 200, 200]);
  const line = (await f.snapshot(id)).body.text.split('\n').find((l: string) => /textbox "Name"/.test(l));
  // Each word typed whole (keystrokes of two commands never interleave), each once.
  const value = /: (\w+)$/.exec(line)![1];
  expect(value).toHaveLength(16);
  expect(value.match(/.{4}/g)!.sort()).toEqual(words);
});

test('a session the owner lost: the direct path gives way to the workflow, which re-opens it from the checkpoint', async () => {
  const id = await f.session();
  await f.open(id, '/form');
  await pollUntil(
    () => row(id),
    (r) => r.checkpoint_at !== null && String(r.url).endsWith('/form'),
  );
  // The page goes away behind the API's back (as when Chromium dies): the row still says open here.
  await f.bw!.host.close(id);
  const snap = await f.snapshot(id);
  expect(snap.status).toBe(200);
  expect(snap.body.url).toBe(`${f.pages.url}/form`);
  expect(await workflowCommands(id)).toBe(1);
  expect(await row(id)).toMatchObject({ status: 'open', recoveries: 1 });
  // Back on the direct path.
  expect((await f.snapshot(id)).status).toBe(200);
  expect(await workflowCommands(id)).toBe(1);
});

test('idle expiry never cuts a direct command short: the workflow asks the owner before expiring', async () => {
  const id = await f.session(f.key, { idle_timeout_s: 1 });
  await f.open(id, '/form');
  // A command running past the idle deadline (waits 3 s for text that never comes).
  const slow = await f.act(id, { action: 'wait_for', text: 'never shown', timeout_ms: 3000 });
  expect(slow.status).toBe(504);
  expect(await row(id)).toMatchObject({ status: 'open' });
  expect((await f.snapshot(id)).status).toBe(200);
  // Then left alone it expires.
  await pollUntil(
    () => row(id),
    (r) => r.status === 'expired',
    60_000,
  );
  expect(f.bw!.host.sessions.has(id)).toBe(false);
});

test('a session closed right after a direct command keeps that page as its last URL and title', async () => {
  const id = await f.session();
  expect((await f.open(id, '/form')).status).toBe(200);
  // At once, well inside the quiet period after which the owner writes its deferred checkpoint.
  const closed = await f.h.req('DELETE', `/v1/browser/sessions/${id}`, { key: f.key });
  expect(closed.status).toBe(200);
  expect(await row(id)).toMatchObject({ status: 'closed', url: `${f.pages.url}/form` });
  expect((await row(id)).title).toBeTruthy();
});
