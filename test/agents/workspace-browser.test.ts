import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runBrowserSessionId } from '../../activities/agents/workspace-browser';
import { withBrowser, type BrowserFixture } from '../browser/browser-harness';
import { startFakeOpenAI, type FakeOpenAI, toolMsgs, userText } from '../helpers/fake-openai';
import { pollUntil } from '../helpers/poll';

jest.setTimeout(240_000);

// Real parts: PostgreSQL, the Temporal dev server, a worker, a browser worker with real Chromium and a
// loopback page server. The model upstream is a local fake that plays the tool calls.
let model: FakeOpenAI;
let otherSession = '';
const env: Record<string, string> = {};
let f: BrowserFixture;

beforeAll(async () => {
  model = await startFakeOpenAI();
  model.onRequest((req) => {
    const q = userText(req);
    const done = toolMsgs(req);
    const url = q.match(/https?:\/\/\S+/)?.[0];
    if (q.includes('WS_BROWSE')) {
      if (done.length === 0) return { toolCalls: [{ name: 'browser_open', arguments: { url } }] };
      if (done.length === 1)
        return {
          toolCalls: [
            { name: 'browser_snapshot', arguments: {} },
            // Another session of the same tenant: the run's tools take no session id.
            { name: 'browser_snapshot', arguments: { session_id: otherSession } },
          ],
        };
      return { reply: `Page: ${done[1].content.slice(0, 4000)}` };
    }
    return { reply: 'ok' };
  });
  const root = mkdtempSync(path.join(tmpdir(), 'svc-wsbrowser-'));
  const file = path.join(root, 'svc.yaml');
  writeFileSync(file, `workspaces:\n  root: "${root}/runs"\n  keep: never\n`);
  Object.assign(env, { SVC_CONFIG: file, OPENAI_BASE_URL: model.url });
});
withBrowser({ env }, (fixture) => (f = fixture));
afterAll(async () => {
  await model?.close();
});

async function sessionOf(runId: string) {
  return f.h.req('GET', `/v1/browser/sessions/${runBrowserSessionId(f.tenantId, runId)}`, { key: f.key });
}

test('a workspace run opens its own browser session, browses a local page and closes the session when it ends', async () => {
  otherSession = await f.session();
  const started = await f.h.req('POST', '/v1/workspaces/run', {
    key: f.key,
    body: { query: `WS_BROWSE read ${f.pages.url}/form`, max_steps: 4 },
    headers: { accept: 'application/json' },
  });
  expect(started.status).toBe(202);
  const id = started.body.id;
  const end = await pollUntil(
    () => f.h.req('GET', `/v1/workspaces/runs/${id}`, { key: f.key }),
    (r) => ['completed', 'failed', 'cancelled'].includes(r.body.status),
    180_000,
  );
  expect(end.body).toMatchObject({ status: 'completed', stop_reason: 'answered' });
  const tools = end.body.steps.filter((s: { kind: string }) => s.kind === 'tool');
  expect(tools.map((s: { name: string; ok: boolean }) => [s.name, s.ok])).toEqual([
    ['browser_open', true],
    ['browser_snapshot', true],
    ['browser_snapshot', false],
  ]);
  // The snapshot of real Chromium reached the model, and the page server saw the visit.
  // (the tool message is the result as JSON, so the snapshot's quotes arrive escaped)
  expect(end.body.answer).toMatch(/heading \\"Sign up\\"/);
  expect(end.body.answer).toMatch(/button \\"Submit\\"/);
  expect(f.pages.hits).toContain('/form');
  // The run's browser tools take no session id: naming another session is refused as an argument.
  expect(tools[2].summary).toMatch(/session_id/);
  // What the model was offered: the run's own browser tools, without a session id, and no session management.
  const offered = model.chats[0].body.tools.map((t: { function: { name: string } }) => t.function.name);
  expect(offered).toEqual(expect.arrayContaining(['browser_open', 'browser_snapshot', 'browser_action']));
  expect(offered).not.toContain('browser_session_create');
  expect(offered).not.toContain('browser_close');
  const openTool = model.chats[0].body.tools.find(
    (t: { function: { name: string } }) => t.function.name === 'browser_open',
  );
  expect(Object.keys(openTool.function.parameters.properties)).not.toContain('session_id');
  // Closed when the run ended (before the run read as completed); the other session is untouched.
  const own = await sessionOf(id);
  expect(own.status).toBe(200);
  expect(own.body).toMatchObject({ status: 'closed', url: `${f.pages.url}/form` });
  const other = await f.h.req('GET', `/v1/browser/sessions/${otherSession}`, { key: f.key });
  expect(other.body).toMatchObject({ status: 'open', url: null });
});

test('cancelling a workspace run closes its browser session', async () => {
  model.reset();
  model.onRequest((req) => {
    const done = toolMsgs(req);
    if (done.length === 0)
      return { toolCalls: [{ name: 'browser_open', arguments: { url: `${f.pages.url}/frames` } }] };
    return { hang: true };
  });
  const started = await f.h.req('POST', '/v1/workspaces/run', {
    key: f.key,
    body: { query: 'WS_HANG browse then wait' },
    headers: { accept: 'application/json' },
  });
  expect(started.status).toBe(202);
  const id = started.body.id;
  // The second model turn is in flight (hanging): the session is open on the page.
  await model.waitFor(() => model.chats.length >= 2, 120_000);
  // The session row is written by the session workflow after the command: read until it shows the page.
  const open = await pollUntil(
    () => sessionOf(id),
    (r) => r.body.url !== null,
    30_000,
  );
  expect(open.body).toMatchObject({ status: 'open', url: `${f.pages.url}/frames` });
  expect((await f.h.req('DELETE', `/v1/workspaces/runs/${id}`, { key: f.key })).status).toBe(202);
  const end = await pollUntil(
    () => f.h.req('GET', `/v1/workspaces/runs/${id}`, { key: f.key }),
    (r) => r.body.status === 'cancelled',
    120_000,
  );
  expect(end.body.status).toBe('cancelled');
  expect((await sessionOf(id)).body.status).toBe('closed');
});
