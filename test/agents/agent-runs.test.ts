import { sql } from 'slonik';
import { z } from 'zod';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startFakeOpenAI, type FakeOpenAI, toolMsgs, userText } from '../helpers/fake-openai';
import { startHarness, startQueueWorker, type Harness, type QueueWorker } from '../helpers/harness';
import { abandonKey, workflowRuns } from '../helpers/idempotency';
import { pollUntil } from '../helpers/poll';
import { withFirstWriteFailing } from '../helpers/db-faults';
import { openStream } from '../tasks/sse-client';

jest.setTimeout(180_000);

// Real parts: PostgreSQL, the Temporal dev server, a worker. Faked outside systems, as real local
// servers: the OpenAI-compatible model upstream (scripted tool calls) and a code-agent delegate.
let h: Harness;
let key: string;
let model: FakeOpenAI;
let worker: QueueWorker | undefined;
let delegate: http.Server;
let durableGate: Promise<void> | undefined;
const delegated: Array<{ headers: http.IncomingHttpHeaders; body: any }> = [];

beforeAll(async () => {
  delegate = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw);
      delegated.push({ headers: req.headers, body });
      // A delegate whose summary holds NUL and a lone surrogate (PostgreSQL stores neither).
      const summary = String(body.task).includes('ODD SUMMARY') ? 'Opened\u0000 PR #43 \ud800.' : 'Opened PR #42.';
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ pr_link: 'https://git.example.com/acme/app/pull/42', summary }));
    });
  });
  await new Promise<void>((r) => delegate.listen(0, '127.0.0.1', () => r()));
  model = await startFakeOpenAI();
  model.onRequest((req) => {
    const q = userText(req);
    if (q.includes('PARALLEL')) {
      if (!toolMsgs(req).length)
        return {
          toolCalls: [
            { name: 'calculator', arguments: { expression: '17 * 23' } },
            { name: 'calculator', arguments: { expression: '6 * 7' } },
          ],
        };
      return {
        reply: `Results: ${toolMsgs(req)
          .map((m) => m.content)
          .join(' | ')}`,
      };
    }
    if (q.includes('TOKENS'))
      return {
        toolCalls: [{ name: 'calculator', arguments: { expression: '1 + 1' } }],
        usage: { prompt_tokens: 9000, completion_tokens: 10 },
      };
    if (q.includes('LOOP')) return { toolCalls: [{ name: 'calculator', arguments: { expression: '1 + 1' } }] };
    if (q.includes('INVENT')) {
      if (!toolMsgs(req).length) return { toolCalls: [{ name: 'launch_rockets', arguments: {} }] };
      return { reply: `Tool said: ${toolMsgs(req)[0].content}` };
    }
    if (q.includes('HANG')) return { hang: true };
    if (q.includes('DURABLE')) {
      if (!toolMsgs(req).length) return { toolCalls: [{ name: 'calculator', arguments: { expression: '2 * 21' } }] };
      return durableGate ? { gate: durableGate, reply: 'late' } : { reply: `Durable: ${toolMsgs(req)[0].content}` };
    }
    return { reply: 'Plain answer.' };
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-agents-'));
  const file = path.join(dir, 'svc.yaml');
  const port = (delegate.address() as AddressInfo).port;
  writeFileSync(file, `agents:\n  delegate:\n    url: "http://127.0.0.1:${port}/tasks"\n    token: "dlg-secret"\n`);
  h = await startHarness({ env: { SVC_CONFIG: file, OPENAI_BASE_URL: model.url, SVC_ALLOW_PRIVATE_FETCH: 'true' } });
  key = (await h.key(['runtime:chat'])).apiKey;
  worker = await startQueueWorker(h);
});
afterAll(async () => {
  await worker?.stop();
  await h?.close();
  await model?.close();
  await new Promise((r) => delegate?.close(r));
});

const start = (body: unknown, headers?: Record<string, string>, k = key) =>
  h.req('POST', '/v1/capabilities/agent', { key: k, body, headers });

test('parallel tool calls: one turn asks for two calls, both run as activities at once, the next turn sees both results', async () => {
  const r = await start({ query: 'PARALLEL: what are 17*23 and 6*7?', wait_s: 60 });
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({
    status: 'completed',
    stop_reason: 'answered',
    is_delegated: false,
    pr_link: null,
    usage: { model_turns: 2, tool_calls: 2 },
  });
  expect(r.body.answer).toContain('391');
  expect(r.body.answer).toContain('42');
  expect(r.body.steps.map((s: { kind: string; name: string; ok: boolean }) => [s.kind, s.name, s.ok])).toEqual([
    ['model', r.body.tier.lane, true],
    ['tool', 'calculator', true],
    ['tool', 'calculator', true],
    ['model', r.body.tier.lane, true],
  ]);
  expect(r.body.usage.total_tokens).toBeGreaterThan(0);
  // Parallel: both tool activities were scheduled before either completed (read from the workflow history).
  const events = (await h.client.workflow.getHandle(`agent-${r.body.id}`).fetchHistory()).events ?? [];
  const scheduledIds = events
    .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'agentToolCall')
    .map((e) => Number(e.eventId));
  const toolScheduled = new Set(scheduledIds);
  const firstDone = events.find(
    (e) =>
      e.activityTaskCompletedEventAttributes &&
      toolScheduled.has(Number(e.activityTaskCompletedEventAttributes.scheduledEventId)),
  );
  expect(scheduledIds).toHaveLength(2);
  expect(Math.max(...scheduledIds)).toBeLessThan(Number(firstDone!.eventId));
  // Every step's output is stored by id (job_outputs), tenant-scoped.
  const ids = r.body.steps.map((s: { output_id: string }) => s.output_id);
  expect(new Set(ids).size).toBe(4);
});

test('the loop is bounded by max_steps: the last turn is offered no tools and the run stops with max_steps', async () => {
  const r = await start({ query: 'LOOP forever please', max_steps: 3, wait_s: 60 });
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({ status: 'completed', stop_reason: 'max_steps', tier: { max_steps: 3 } });
  const chats = model.chats.filter((c) => userText(c).includes('LOOP'));
  expect(chats).toHaveLength(3);
  expect(chats[0].body.tools?.length).toBeGreaterThan(0);
  expect(chats[2].body.tools).toBeUndefined();
  expect(r.body.usage).toMatchObject({ model_turns: 3, tool_calls: 2 });
});

test('the loop is bounded by tokens: past the tier budget the run stops with max_tokens', async () => {
  const r = await start({ query: 'TOKENS heavy', wait_s: 60 });
  expect(r.body).toMatchObject({
    status: 'completed',
    stop_reason: 'max_tokens',
    tier: { name: 'quick', max_tokens: 8000 },
  });
  expect(r.body.usage).toMatchObject({ model_turns: 1, tool_calls: 1, total_tokens: 9010 });
});

test('a tool the model invents is a failed step fed back to the model, not a crash', async () => {
  const r = await start({ query: 'INVENT a tool', wait_s: 60 });
  expect(r.body.status).toBe('completed');
  const step = r.body.steps.find((s: { kind: string }) => s.kind === 'tool');
  expect(step).toMatchObject({ name: 'launch_rockets', ok: false });
  expect(r.body.answer).toContain('Unknown or not allowed tool: launch_rockets');
});

test('tier selection: quick, standard, deep and code by the documented features; tools follow the tier', async () => {
  const quick = await start({ query: 'What is 2 + 2?' });
  expect(quick.body.tier).toMatchObject({ name: 'quick', lane: 'mid', max_steps: 3, delegate: false });
  expect(quick.body.tier.tools).toContain('calculator');
  const deep = await start({
    query:
      'Research and compare these options:\n1. https://a.example/one\n2. https://b.example/two\n3. the third\n4. the fourth',
  });
  expect(deep.body.tier).toMatchObject({ name: 'deep', lane: 'mid-strong' });
  expect(deep.body.tier.reasons).toEqual(expect.arrayContaining(['2 url(s)', '4 parts', 'analysis wording']));
  const standard = await start({ query: 'Compare tea and coffee.' });
  expect(standard.body.tier.name).toBe('standard');
  const limited = await start({ query: 'What is 2 + 2?', tools: ['calculator'] });
  expect(limited.body.tier.tools).toEqual(['calculator']);
  for (const id of [quick.body.id, deep.body.id, standard.body.id, limited.body.id])
    await pollUntil(
      () => h.req('GET', `/v1/capabilities/agent/${id}`, { key }),
      (x) => ['completed', 'failed'].includes(x.body.status),
      60_000,
    );
});

test('delegation: a code change with a configured delegate is handed over through the fetch guard', async () => {
  const before = model.chats.length;
  const r = await start({ query: 'Fix the null check bug in src/app.ts and open a pull request.', wait_s: 60 });
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({
    status: 'completed',
    stop_reason: 'delegated',
    is_delegated: true,
    pr_link: 'https://git.example.com/acme/app/pull/42',
    answer: 'Opened PR #42.',
    tier: { name: 'code', delegate: true },
  });
  expect(delegated).toHaveLength(1);
  expect(delegated[0].body).toMatchObject({ run_id: r.body.id, task: expect.stringContaining('src/app.ts') });
  expect(delegated[0].headers['idempotency-key']).toBe(r.body.id);
  expect(delegated[0].headers.authorization).toBe('Bearer dlg-secret');
  expect(model.chats.length).toBe(before); // no model turn ran

  // The delegate's summary is made storable, not a run stuck retrying its write.
  const odd = await start({ query: 'Fix the ODD SUMMARY bug in src/app.ts and open a pull request.', wait_s: 60 });
  expect(odd.body).toMatchObject({ status: 'completed', answer: 'Opened\uFFFD PR #43 \uFFFD.' });
});

test('SSE progress with ids and Last-Event-ID resume', async () => {
  const r = await start({ query: 'PARALLEL again: 17*23 and 6*7', wait_s: 60 });
  const url = `${h.url}/v1/capabilities/agent/${r.body.id}/events`;
  const all = await openStream(url, { method: 'GET', key });
  expect(all.events.map((e) => e.event)).toEqual(['started', 'turn', 'tool', 'tool', 'turn', 'done']);
  const resumed = await openStream(url, { method: 'GET', key, lastEventId: all.events[2].id });
  expect(resumed.events.map((e) => e.id)).toEqual(all.events.slice(3).map((e) => e.id));
});

test('progress whose event fails once is retried whole: one started, turn, tool and done each (the streams close)', async () => {
  // A database fault: the first event of each type written to an agent stream fails. Each write and its event are
  // one transaction, so the retry finds nothing done and writes both (a write committed alone made the retry skip
  // its event: a missing done left the run's event streams open).
  const kinds = ['started', 'turn', 'tool', 'done'];
  const { fired } = await withFirstWriteFailing(
    h.db,
    { table: 'events', op: 'INSERT', when: "NEW.type = $kind AND NEW.stream LIKE 'agent:%'", kinds },
    async () => {
      const r = await start({ query: 'PARALLEL once more: 17*23 and 6*7' });
      const id = r.body.id as string;
      const dones = () =>
        h.db.oneFirst(
          sql.type(z.object({ n: z.number() }))`
            SELECT count(*)::int AS n FROM events WHERE stream = ${`agent:${id}`} AND type = 'done'`,
        );
      expect(await pollUntil(dones, (n) => n > 0, 60_000)).toBe(1);
      const all = await openStream(`${h.url}/v1/capabilities/agent/${id}/events`, { method: 'GET', key });
      expect(all.events.map((e) => e.event)).toEqual(['started', 'turn', 'tool', 'tool', 'turn', 'done']);
      expect(all.events.at(-1)).toMatchObject({ event: 'done', data: { status: 'completed' } });
      expect((await h.req('GET', `/v1/capabilities/agent/${id}`, { key })).body.status).toBe('completed');
    },
  );
  expect(fired).toEqual(kinds);
});

test('idempotent create: same key and body → the same run; same key, other body → 409', async () => {
  const headers = { 'idempotency-key': 'agent-idem-1' };
  const a = await start({ query: 'Say hello' }, headers);
  const b = await start({ query: 'Say hello' }, headers);
  expect(a.status).toBe(202);
  expect(b.body.id).toBe(a.body.id);
  const c = await start({ query: 'Say goodbye' }, headers);
  expect(c.status).toBe(409);
});

test('the crash window: a retry under the same Idempotency-Key after the API died before storing its answer gets the same run, one workflow', async () => {
  const body = { query: 'Crash window: say hello' };
  const first = await start(body, { 'idempotency-key': 'agent-crash-1' });
  expect(first.status).toBe(202);
  const id = first.body.id as string;
  // As a dead process leaves it: the run and its workflow exist, the claim has no answer, lease over.
  const tenantId = (await h.req('GET', '/v1/key', { key })).body.tenant_id as string;
  await abandonKey(h, tenantId, 'POST /v1/capabilities/agent', 'agent-crash-1');
  const retried = await start(body, { 'idempotency-key': 'agent-crash-1' });
  expect(retried.body.id).toBe(id);
  expect(retried.headers.get('idempotent-replayed')).toBeNull();
  // Same key, another body: the usual conflict.
  const other = await start({ query: 'Crash window: say goodbye' }, { 'idempotency-key': 'agent-crash-1' });
  expect(other.status).toBe(409);
  expect(other.body.code).toBe('idempotency_conflict');
  expect(await workflowRuns(h, `agent-${id}`)).toBe(1);
  const rows = await h.db.oneFirst(
    sql.unsafe`SELECT count(*)::int FROM agent_runs WHERE tenant_id = ${tenantId} AND query = ${body.query}`,
  );
  expect(rows).toBe(1);
});

test('bad input is a 400 naming the field; missing scope 403; another tenant 404; cancel', async () => {
  const bad = await start({ query: 'x', max_steps: 0 });
  expect(bad.status).toBe(400);
  expect(JSON.stringify(bad.body.details)).toContain('body.max_steps');
  const unknown = await start({ query: 'x', tools: ['calculator', 'no_such_tool'] });
  expect(unknown.status).toBe(400);
  expect(unknown.body.details).toEqual([{ path: 'body.tools[1]', message: 'unknown tool "no_such_tool"' }]);
  const noAgent = await start({ query: 'x', agent_id: 'agt_missing' });
  expect(noAgent.status).toBe(404);
  const modelsOnly = (await h.key(['runtime:models'])).apiKey;
  expect((await start({ query: 'x' }, undefined, modelsOnly)).status).toBe(403);
  // A requested tool beyond the key's scopes: 403 naming the tool and the scope it needs.
  const browser = await start({ query: 'x', tools: ['calculator', 'browser_open'] });
  expect(browser.status).toBe(403);
  expect(browser.body.error).toMatch(/"browser_open"/);
  expect(browser.body.scope).toBe('runtime:workspaces');

  const hung = await start({ query: 'HANG here' });
  const other = (await h.key(['runtime:chat'])).apiKey;
  expect((await h.req('GET', `/v1/capabilities/agent/${hung.body.id}`, { key: other })).status).toBe(404);
  expect((await h.req('DELETE', `/v1/capabilities/agent/${hung.body.id}`, { key: other })).status).toBe(404);
  expect((await h.req('GET', `/v1/capabilities/agent/${hung.body.id}/events`, { key: other })).status).toBe(404);
  await model.waitFor(() => model.chats.some((c) => userText(c).includes('HANG')), 60_000);
  const del = await h.req('DELETE', `/v1/capabilities/agent/${hung.body.id}`, { key });
  expect(del.status).toBe(202);
  const done = await pollUntil(
    () => h.req('GET', `/v1/capabilities/agent/${hung.body.id}`, { key }),
    (x) => x.body.status !== 'running' && x.body.status !== 'queued',
    60_000,
  );
  expect(done.body.status).toBe('cancelled');
  // The model call itself was aborted (heartbeat → cancellation → AbortSignal).
  await model.waitFor(
    () => model.chats.filter((c) => userText(c).includes('HANG')).every((c) => c.closedEarly),
    60_000,
  );
  expect((await h.req('DELETE', `/v1/capabilities/agent/${hung.body.id}`, { key })).status).toBe(409);
});

test('survives a worker restart mid-run: stored turns and tool calls are not repeated', async () => {
  let release!: () => void;
  durableGate = new Promise<void>((r) => (release = r));
  const r = await start({ query: 'DURABLE run across a restart' });
  const turns = () => model.chats.filter((c) => userText(c).includes('DURABLE'));
  // Turn 2 is in flight (turn 1 and its tool call are stored): stop the worker now.
  await model.waitFor(() => turns().some((c) => toolMsgs(c).length > 0), 60_000);
  await worker!.stop();
  worker = undefined;
  durableGate = undefined;
  release();
  expect((await h.req('GET', `/v1/capabilities/agent/${r.body.id}`, { key })).body.status).toBe('running');
  worker = await startQueueWorker(h);
  const done = await pollUntil(
    () => h.req('GET', `/v1/capabilities/agent/${r.body.id}`, { key }),
    (x) => ['completed', 'failed'].includes(x.body.status),
    90_000,
  );
  expect(done.body).toMatchObject({ status: 'completed', answer: expect.stringContaining('42') });
  expect(turns().filter((c) => toolMsgs(c).length === 0)).toHaveLength(1); // turn 1 asked once
  expect(done.body.usage).toMatchObject({ model_turns: 2, tool_calls: 1 });
});
