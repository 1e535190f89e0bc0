import { sql } from 'slonik';
import { z } from 'zod';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { abandonKey, workflowRuns } from '../helpers/idempotency';
import { pollUntil } from '../helpers/poll';
import { startReceiver, type Receiver } from './receiver';

jest.setTimeout(120_000);

let fake: FakeOpenAI;
let h: Harness;
let key: string;
let rx: Receiver;
withFakeUpstream(
  { scopes: ['runtime:chat'], worker: true, env: { SVC_ALLOW_PRIVATE_FETCH: 'true' } },
  (up) => ({ fake, h, key } = up),
);
beforeAll(async () => (rx = await startReceiver()));
afterAll(async () => rx?.close());

const plan = (body: unknown, k = key, headers: Record<string, string> = {}) =>
  h.req('POST', '/v1/tools/plan', { key: k, body, headers });
const run = (id: string, k = key) => h.req('GET', `/v1/tools/plans/runs/${id}`, { key: k });
const until = (id: string, done: (b: any) => boolean) =>
  pollUntil(
    () => run(id),
    (r) => done(r.body),
    60_000,
  );
const count = (q: ReturnType<typeof sql.unsafe>) => h.db.oneFirst(sql.type(z.object({ n: z.number() }))`${q}`);

test('GET /v1/tools lists the new tools by scope: browser_* and email_send only with their scopes', async () => {
  const chat = await h.req('GET', '/v1/tools', { key });
  const names = chat.body.data.map((t: any) => t.name);
  expect(names).toEqual(
    expect.arrayContaining([
      'web_search',
      'web_fetch',
      'research',
      'knowledge_search',
      'memory_write',
      'task_create',
      'task_execute',
    ]),
  );
  expect(names).not.toContain('browser_open');
  expect(names).not.toContain('email_send');
  const wide = await h.key(['runtime:workspaces', 'runtime:email:send']);
  const more = (await h.req('GET', '/v1/tools', { key: wide.apiKey })).body.data.map((t: any) => t.name);
  expect(more).toEqual(
    expect.arrayContaining([
      'browser_session_create',
      'browser_open',
      'browser_snapshot',
      'browser_action',
      'email_send',
    ]),
  );
  expect(more).not.toContain('web_fetch');
});

test('plan validation: bad argument → 400 with its JSON pointer; unknown tool; cycle named; tool beyond scope → 403', async () => {
  const bad = await plan({
    goal: 'g',
    steps: [
      { id: 'a', tool: 'calculator', args: { expression: '1+1' } },
      { id: 'b', tool: 'web_fetch', args: { url: 42 } },
    ],
  });
  expect(bad.status).toBe(400);
  expect(bad.body.details.map((d: any) => d.path)).toEqual(['/steps/1/args/url']);
  const unknown = await plan({ goal: 'g', steps: [{ id: 'a', tool: 'no_such_tool', args: {} }] });
  expect(unknown.status).toBe(400);
  expect(unknown.body.details[0]).toMatchObject({ path: '/steps/0/tool' });
  const cycle = await plan({
    goal: 'g',
    steps: [
      { id: 'a', tool: 'calculator', args: { expression: '{{steps.b.result.result}}' } },
      { id: 'b', tool: 'calculator', args: { expression: '1' }, depends_on: ['a'] },
    ],
  });
  expect(cycle.status).toBe(400);
  expect(cycle.body.error).toMatch(/cycle (a → b → a|b → a → b)/);
  const scope = await plan({
    goal: 'g',
    steps: [{ id: 'm', tool: 'email_send', args: { to: 'a@b.co', subject: 's', body: 'b' } }],
  });
  expect(scope.status).toBe(403);
  expect(scope.body.scope).toBe('runtime:email:send');
  // A reference stands in for a value of any type: checked when the run knows it.
  const ref = await plan({
    goal: 'g',
    steps: [
      { id: 'a', tool: 'calculator', args: { expression: '2*3' } },
      { id: 'b', tool: 'calculator', args: { expression: '{{steps.a.result.result}} + 1' } },
    ],
  });
  expect(ref.status).toBe(201);
  expect(ref.body.steps[1]).toMatchObject({ id: 'b', depends_on: ['a'], level: 1 });
  expect(ref.body.levels).toEqual([['a'], ['b']]);
  expect(ref.body.critical_path.steps).toEqual(['a', 'b']);
});

test('model-written plan: JSON-schema output, an invalid first answer repaired once', async () => {
  fake.reset();
  fake.script(
    { reply: JSON.stringify({ steps: [{ id: 'x', tool: 'calculator', args: { expression: 7 }, depends_on: [] }] }) },
    {
      reply: JSON.stringify({ steps: [{ id: 'x', tool: 'calculator', args: { expression: '6*7' }, depends_on: [] }] }),
    },
  );
  const r = await plan({ goal: 'What is six times seven?', tools: ['calculator'] });
  expect(r.status).toBe(201);
  expect(r.body).toMatchObject({
    source: 'model',
    steps: [{ id: 'x', tool: 'calculator', args: { expression: '6*7' } }],
  });
  expect(fake.chats).toHaveLength(2);
  expect(fake.chats[0].body.response_format).toMatchObject({ type: 'json_schema' });
  expect(fake.chats[0].body.response_format.json_schema.schema.properties.steps.items.properties.tool.enum).toEqual([
    'calculator',
  ]);
  expect(JSON.stringify(fake.chats[1].body.messages)).toContain('/steps/0/args/expression');
  fake.script({ reply: 'not json' }, { reply: '{"steps": []}' });
  const twice = await plan({ goal: 'x', tools: ['calculator'] });
  expect(twice.status).toBe(502);
  // A \u0000 or lone-surrogate escape in the model's JSON decodes to what PostgreSQL cannot store: it was a 400
  // blaming the client's request; the plan is stored with U+FFFD.
  fake.script({ reply: '{"steps":[{"id":"x","tool":"calculator","args":{"expression":"6*7\\u0000\\ud800"}}]}' });
  const odd = await plan({ goal: 'What is six times seven?', tools: ['calculator'] });
  expect(odd.status).toBe(201);
  expect(odd.body.steps[0].args.expression).toBe('6*7\uFFFD\uFFFD');
});

test('execute-plan: independent steps run in parallel, a reference feeds the next step, results stored', async () => {
  rx.together(['/p1', '/p2']);
  const created = await plan({
    goal: 'two pages and a sum',
    steps: [
      { id: 'a', tool: 'web_fetch', args: { url: `${rx.url}/p1` } },
      { id: 'b', tool: 'web_fetch', args: { url: `${rx.url}/p2` } },
      {
        id: 'sum',
        tool: 'calculator',
        args: { expression: '{{steps.a.result.token_estimate}} + {{steps.b.result.token_estimate}}' },
      },
    ],
  });
  expect(created.status).toBe(201);
  expect(created.body.levels).toEqual([['a', 'b'], ['sum']]);
  const started = await h.req('POST', '/v1/tools/execute-plan', { key, body: { plan_id: created.body.id } });
  expect(started.status).toBe(202);
  expect(started.body.workflow_id).toBe(`plan-${started.body.id}`);
  const done = await until(started.body.id, (b) => b.status === 'completed');
  const byId = Object.fromEntries(done.body.steps.map((s: any) => [s.id, s]));
  const expected = byId.a.result.token_estimate + byId.b.result.token_estimate;
  expect(byId.sum).toMatchObject({ status: 'completed', result: { result: String(expected) } });
  expect([rx.received('/p1'), rx.received('/p2')]).toEqual([1, 1]);
  rx.together([]);
});

test('approval gate: the run pauses at an unapproved step and goes on once it is approved', async () => {
  const created = await plan({
    goal: 'gate',
    steps: [
      { id: 'a', tool: 'calculator', args: { expression: '20+1' } },
      { id: 'g', tool: 'calculator', args: { expression: '{{steps.a.result.result}} * 2' }, approval: true },
    ],
  });
  expect(created.body.gates).toEqual(['g']);
  const started = await h.req('POST', '/v1/tools/execute-plan', { key, body: { plan_id: created.body.id } });
  const paused = await until(started.body.id, (b) => b.status === 'awaiting_approval');
  expect(paused.body.awaiting).toEqual(['g']);
  expect(paused.body.steps.find((s: any) => s.id === 'a').status).toBe('completed');
  expect(paused.body.steps.find((s: any) => s.id === 'g').result).toBeUndefined();
  const wrong = await h.req('POST', `/v1/tools/plans/runs/${started.body.id}/approve`, { key, body: { steps: ['a'] } });
  expect(wrong.status).toBe(400);
  const ok = await h.req('POST', `/v1/tools/plans/runs/${started.body.id}/approve`, { key, body: { steps: ['g'] } });
  expect(ok.status).toBe(200);
  const done = await until(started.body.id, (b) => b.status === 'completed');
  expect(done.body.steps.find((s: any) => s.id === 'g').result).toEqual({ expression: '21 * 2', result: '42' });
});

test('dry run executes nothing: no request, no result row, no workflow', async () => {
  const r = await h.req('POST', '/v1/tools/execute-plan', {
    key,
    body: {
      plan: { goal: 'dry', steps: [{ id: 'f', tool: 'web_fetch', args: { url: `${rx.url}/dry` } }] },
      dry_run: true,
    },
  });
  expect(r.status).toBe(202);
  expect(r.body).toMatchObject({ status: 'dry_run', workflow_id: null, steps: [{ id: 'f', status: 'pending' }] });
  expect(r.body.plan.preview[0]).toContain('web_fetch');
  expect(rx.received('/dry')).toBe(0);
  expect(await count(sql.unsafe`SELECT count(*)::int AS n FROM tool_plan_results WHERE run_id = ${r.body.id}`)).toBe(0);
  await expect(h.client.workflow.getHandle(`plan-${r.body.id}`).describe()).rejects.toThrow();
});

test("tenant isolation: another tenant's plan and run answer 404", async () => {
  const created = await plan({ goal: 'mine', steps: [{ id: 'a', tool: 'calculator', args: { expression: '1' } }] });
  const dry = await h.req('POST', '/v1/tools/execute-plan', { key, body: { plan_id: created.body.id, dry_run: true } });
  const other = (await h.key(['runtime:chat'])).apiKey;
  expect((await h.req('GET', `/v1/tools/plans/${created.body.id}`, { key: other })).status).toBe(404);
  expect((await run(dry.body.id, other)).status).toBe(404);
  expect(
    (await h.req('POST', '/v1/tools/execute-plan', { key: other, body: { plan_id: created.body.id } })).status,
  ).toBe(404);
  expect((await h.req('DELETE', `/v1/tools/plans/runs/${dry.body.id}`, { key: other })).status).toBe(404);
  expect((await h.req('GET', `/v1/tools/plans/${created.body.id}`, { key })).status).toBe(200);
});

test('Idempotency-Key: a repeated create or execute answers the first result without a second plan or run', async () => {
  const body = { goal: 'idem', steps: [{ id: 'a', tool: 'calculator', args: { expression: '3+4' } }] };
  const one = await plan(body, key, { 'idempotency-key': 'plan-idem-1' });
  const two = await plan(body, key, { 'idempotency-key': 'plan-idem-1' });
  expect(two.body.id).toBe(one.body.id);
  expect(await count(sql.unsafe`SELECT count(*)::int AS n FROM tool_plans WHERE goal = 'idem'`)).toBe(1);
  const ex = { plan_id: one.body.id };
  const r1 = await h.req('POST', '/v1/tools/execute-plan', {
    key,
    body: ex,
    headers: { 'idempotency-key': 'run-idem-1' },
  });
  const r2 = await h.req('POST', '/v1/tools/execute-plan', {
    key,
    body: ex,
    headers: { 'idempotency-key': 'run-idem-1' },
  });
  expect(r2.body.id).toBe(r1.body.id);
  expect(await count(sql.unsafe`SELECT count(*)::int AS n FROM tool_plan_runs WHERE plan_id = ${one.body.id}`)).toBe(1);
  await until(r1.body.id, (b) => b.status === 'completed');
});

test('Idempotency-Key, crash window: a retry after the API died before storing its answer attaches to the same run and plan; another body → 409', async () => {
  const tenantId = (await h.req('GET', '/v1/key', { key })).body.tenant_id as string;
  const exec = (body: unknown) =>
    h.req('POST', '/v1/tools/execute-plan', { key, body, headers: { 'idempotency-key': 'run-crash-1' } });
  const body = {
    plan: { goal: 'crash window plan', steps: [{ id: 'a', tool: 'calculator', args: { expression: '5*5' } }] },
  };
  const first = await exec(body);
  expect(first.status).toBe(202);
  // As a dead process leaves it: plan, run and workflow exist, the claim has no answer, the lease is over.
  await abandonKey(h, tenantId, 'POST /v1/tools/execute-plan', 'run-crash-1');
  const retried = await exec(body);
  expect(retried.status).toBe(202);
  expect(retried.body.id).toBe(first.body.id);
  expect(retried.body.plan_id).toBe(first.body.plan_id);
  expect(retried.headers.get('idempotent-replayed')).toBeNull();
  const other = await exec({ plan: { ...body.plan, goal: 'another body' } });
  expect(other.status).toBe(409);
  expect(other.body.code).toBe('idempotency_conflict');
  expect(await workflowRuns(h, `plan-${first.body.id}`)).toBe(1);
  expect(
    await count(
      sql.unsafe`SELECT count(*)::int AS n FROM tool_plans WHERE goal = 'crash window plan' AND tenant_id = ${tenantId}`,
    ),
  ).toBe(1);
  const done = await until(first.body.id, (b) => b.status === 'completed');
  expect(done.body.steps[0]).toMatchObject({ status: 'completed', result: { result: '25' } });
});
