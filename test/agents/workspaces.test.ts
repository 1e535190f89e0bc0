import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'slonik';
import { z } from 'zod';
import { randomToken } from '../../activities/store/ids';
import { startFakeOpenAI, type FakeOpenAI, toolMsgs, userText } from '../helpers/fake-openai';
import { startHarness, type Harness } from '../helpers/harness';
import { abandonKey, workflowRuns } from '../helpers/idempotency';
import { pollUntil } from '../helpers/poll';
import { openStream, type SseEvent } from '../tasks/sse-client';

jest.setTimeout(180_000);

let h: Harness;
let key: string;
let tenantId: string;
let model: FakeOpenAI;
let root: string;

beforeAll(async () => {
  model = await startFakeOpenAI();
  model.onRequest((req) => {
    const q = userText(req);
    const done = toolMsgs(req);
    if (q.includes('WS_FILES')) {
      if (!done.length)
        return {
          toolCalls: [
            { name: 'file_write', arguments: { path: 'notes/hello.txt', content: 'hello workspace' } },
            { name: 'file_read', arguments: { path: '../../../etc/hostname' } },
            { name: 'file_read', arguments: { path: '/etc/hostname' } },
          ],
        };
      if (done.length === 3) return { toolCalls: [{ name: 'file_read', arguments: { path: 'notes/hello.txt' } }] };
      return { reply: `Read back: ${done[3].content}` };
    }
    const marker = q.match(/marker-[a-z0-9]+/)?.[0];
    if (q.includes('WS_SLEEP') && !done.length)
      return { toolCalls: [{ name: 'shell', arguments: { command: `sleep 300; echo ${marker}` } }] };
    return { reply: 'ok' };
  });
  root = mkdtempSync(path.join(tmpdir(), 'svc-wsroot-'));
  const file = path.join(root, 'svc.yaml');
  writeFileSync(file, `workspaces:\n  root: "${root}/runs"\n  keep: never\n`);
  h = await startHarness({ worker: true, env: { SVC_CONFIG: file, OPENAI_BASE_URL: model.url } });
  ({ apiKey: key, tenantId } = await h.key(['runtime:workspaces']));
});
afterAll(async () => {
  await h?.close();
  await model?.close();
});

/** POST /v1/workspaces/run read as SSE until `done`. */
async function runStream(body: unknown, k = key): Promise<{ status: number; events: SseEvent[] }> {
  const res = await fetch(`${h.url}/v1/workspaces/run`, {
    method: 'POST',
    headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(body),
  });
  if (!res.ok) return { status: res.status, events: [] };
  const events: SseEvent[] = [];
  for (const block of (await res.text()).split('\n\n')) {
    const e: SseEvent = { data: undefined };
    for (const line of block.split('\n')) {
      if (line.startsWith('id: ')) e.id = line.slice(4);
      else if (line.startsWith('event: ')) e.event = line.slice(7);
      else if (line.startsWith('data: ')) e.data = JSON.parse(line.slice(6));
    }
    if (e.event) events.push(e);
  }
  return { status: res.status, events };
}

/** Processes whose command line holds `marker` (the sandboxed shell and bwrap around it). */
function processesWith(marker: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d) && Number(d) !== process.pid)
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

test('a run streams SSE with ids; file tools work inside the folder and refuse escapes; the folder is removed', async () => {
  const r = await runStream({ query: 'WS_FILES write and read back', max_steps: 4 });
  expect(r.status).toBe(200);
  expect(r.events[0]).toMatchObject({ event: 'run', data: { id: expect.stringMatching(/^arun_/) } });
  expect(r.events.map((e) => e.event)).toEqual([
    'run',
    'started',
    'turn',
    'tool',
    'tool',
    'tool',
    'turn',
    'tool',
    'turn',
    'done',
  ]);
  expect(r.events.slice(1).every((e) => Number(e.id) > 0)).toBe(true);
  const id = r.events[0].data.id;
  const state = await h.req('GET', `/v1/workspaces/runs/${id}`, { key });
  expect(state.body).toMatchObject({ kind: 'workspace', status: 'completed', stop_reason: 'answered' });
  expect(state.body.answer).toContain('hello workspace');
  const tools = state.body.steps.filter((s: { kind: string }) => s.kind === 'tool');
  expect(tools.map((s: { name: string; ok: boolean }) => [s.name, s.ok])).toEqual([
    ['file_write', true],
    ['file_read', false],
    ['file_read', false],
    ['file_read', true],
  ]);
  expect(tools.map((s: { summary: string }) => s.summary).join('\n')).toMatch(/leaves the workspace[\s\S]*is absolute/);
  expect(existsSync(path.join(root, 'runs', id))).toBe(false);
  // Resume: everything after the first stored event, same ids.
  const resumed = await openStream(`${h.url}/v1/workspaces/runs/${id}/events`, {
    method: 'GET',
    key,
    lastEventId: r.events[1].id,
  });
  expect(resumed.events.map((e) => e.id)).toEqual(r.events.slice(2).map((e) => e.id));
});

test('keep_folder keeps the scratch folder with what the agent wrote', async () => {
  const r = await runStream({ query: 'WS_FILES keep this one', max_steps: 4, keep_folder: true });
  const id = r.events[0].data.id;
  expect(readFileSync(path.join(root, 'runs', id, 'notes', 'hello.txt'), 'utf8')).toBe('hello workspace');
});

test('cancel kills the sandboxed shell: no process is left behind, the folder is removed', async () => {
  const health = await h.req('GET', '/v1/workspaces/health', { key });
  expect(health.body.shell.available).toBe(true);
  expect(health.body.tools).toContain('shell');
  const marker = `marker-${randomToken(12)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, 'x')}`;
  const started = await h.req('POST', '/v1/workspaces/run', {
    key,
    body: { query: `WS_SLEEP ${marker}` },
    headers: { accept: 'application/json' },
  });
  expect(started.status).toBe(202);
  const id = started.body.id;
  await pollUntil(
    async () => processesWith(marker).length,
    (n) => n > 0,
    60_000,
  );
  const del = await h.req('DELETE', `/v1/workspaces/runs/${id}`, { key });
  expect(del.status).toBe(202);
  await pollUntil(
    async () => processesWith(marker).length,
    (n) => n === 0,
    60_000,
  );
  const end = await pollUntil(
    () => h.req('GET', `/v1/workspaces/runs/${id}`, { key }),
    (x) => x.body.status === 'cancelled',
    60_000,
  );
  expect(end.body.status).toBe('cancelled');
  expect(existsSync(path.join(root, 'runs', id))).toBe(false);
  // The killed shell's tool call ends after the run did: it stores no step and writes no event after `done`.
  await new Promise((r) => setTimeout(r, 2000));
  const types = await h.db.anyFirst(sql.type(z.object({ type: z.string() }))`
    SELECT type FROM events WHERE stream = ${`agent:${id}`} ORDER BY id`);
  expect(types.at(-1)).toBe('done');
  expect(types.filter((t) => t === 'done')).toHaveLength(1);
  const later = await h.req('GET', `/v1/workspaces/runs/${id}`, { key });
  expect(later.body.steps).toEqual(end.body.steps);
  expect(later.body.steps.filter((st: { kind: string }) => st.kind === 'tool')).toEqual([]);
});

test('scope, isolation and input: runtime:workspaces required; other tenants 404; agent runs are not workspace runs', async () => {
  const chatOnly = (await h.key(['runtime:chat'])).apiKey;
  expect((await runStream({ query: 'x' }, chatOnly)).status).toBe(403);
  const started = await h.req('POST', '/v1/workspaces/run', {
    key,
    body: { query: 'plain' },
    headers: { accept: 'application/json' },
  });
  const other = (await h.key(['runtime:workspaces'])).apiKey;
  expect((await h.req('GET', `/v1/workspaces/runs/${started.body.id}`, { key: other })).status).toBe(404);
  expect((await h.req('DELETE', `/v1/workspaces/runs/${started.body.id}`, { key: other })).status).toBe(404);
  const sameTenantChat = (await h.key(['runtime:chat'], { tenantId })).apiKey;
  expect((await h.req('GET', `/v1/capabilities/agent/${started.body.id}`, { key: sameTenantChat })).status).toBe(404);
  const bad = await h.req('POST', '/v1/workspaces/run', { key, body: { query: 'x', keep_folder: 'yes' } });
  expect(bad.status).toBe(400);
  expect(JSON.stringify(bad.body.details)).toContain('body.keep_folder');
  // calculator needs runtime:chat, which this key lacks.
  const forbidden = await h.req('POST', '/v1/workspaces/run', { key, body: { query: 'x', tools: ['calculator'] } });
  expect(forbidden.status).toBe(403);
  expect(forbidden.body.scope).toBe('runtime:chat');
  const unknown = await h.req('POST', '/v1/workspaces/run', {
    key,
    body: { query: 'x', tools: ['file_read', 'rm_rf'] },
  });
  expect(unknown.body.details).toEqual([{ path: 'body.tools[1]', message: 'unknown tool "rm_rf"' }]);
});

test('Idempotency-Key: a retry after the API died before storing its answer gets the same run (one workflow); another body → 409', async () => {
  const post = (body: unknown) =>
    h.req('POST', '/v1/workspaces/run', {
      key,
      body,
      headers: { accept: 'application/json', 'idempotency-key': 'ws-crash-1' },
    });
  const body = { query: 'crash window workspace' };
  const first = await post(body);
  expect(first.status).toBe(202);
  await abandonKey(h, tenantId, 'POST /v1/workspaces/run', 'ws-crash-1');
  const retried = await post(body);
  expect(retried.status).toBe(202);
  expect(retried.body.id).toBe(first.body.id);
  expect(retried.headers.get('idempotent-replayed')).toBeNull();
  const replay = await post(body);
  expect(replay.body.id).toBe(first.body.id);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  const other = await post({ query: 'another body' });
  expect(other.status).toBe(409);
  expect(other.body.code).toBe('idempotency_conflict');
  expect(await workflowRuns(h, `agent-${first.body.id}`)).toBe(1);
});
