import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from '../helpers/fake-openai';
import { startHarness, type Harness } from '../helpers/harness';

jest.setTimeout(180_000);

// The model upstream is a real local server; each test scripts what the "designer" model writes.
let h: Harness;
let key: string;
let model: FakeOpenAI;

const draft = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    name: 'Invoice checker',
    instructions: 'Check every line total with the calculator and list the wrong ones.',
    tools: ['calculator', 'launch_rockets'],
    lane: 'mid',
    tier: 'standard',
    guardrails: { max_steps: 4, allow_external: false, allow_destructive: false, refuse_topics: [] },
    ...over,
  });

const system = (r: RecordedRequest) => String(r.body?.messages?.[0]?.content ?? '');

beforeAll(async () => {
  model = await startFakeOpenAI();
  h = await startHarness({ worker: true, env: { OPENAI_BASE_URL: model.url } });
  key = (await h.key(['runtime:chat'])).apiKey;
});
afterAll(async () => {
  await h?.close();
  await model?.close();
});

const vibe = (description: string, k = key) => h.req('POST', '/v1/agents/vibe', { key: k, body: { description } });

test('the model writes the definition under a JSON schema; unknown tools are dropped and listed, never stored', async () => {
  model.script({ reply: draft() });
  const r = await vibe('An agent that checks the arithmetic in invoices.');
  expect(r.status).toBe(201);
  expect(r.body).toMatchObject({
    id: expect.stringMatching(/^agt_/),
    name: 'Invoice checker',
    tools: ['calculator'],
    dropped_tools: ['launch_rockets'],
    lane: 'mid',
    tier: 'standard',
    guardrails: { max_steps: 4 },
  });
  const req = model.chats.at(-1)!;
  expect(req.body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'agent_definition' } });
  expect(req.body.response_format.json_schema.schema.required).toEqual(
    expect.arrayContaining(['name', 'instructions', 'tools', 'lane', 'tier', 'guardrails']),
  );
  expect(system(req)).toContain('- calculator:');
  const got = await h.req('GET', `/v1/agents/${r.body.id}`, { key });
  expect(got.body).toEqual(r.body);
});

test('an invalid answer gets one repair round with the errors quoted back; a second invalid one is a 502', async () => {
  model.script({ reply: draft({ lane: 'gpt-9' }) }, { reply: draft({ tools: ['calculator'] }) });
  const repaired = await vibe('An agent that adds numbers for me.');
  expect(repaired.status).toBe(201);
  expect(repaired.body.tools).toEqual(['calculator']);
  const repairMsg = model.chats.at(-1)!.body.messages.at(-1).content as string;
  expect(repairMsg).toContain('lane');

  model.script({ reply: 'not json at all' }, { reply: '{"name": 3}' });
  const failed = await vibe('An agent that never gets written.');
  expect(failed.status).toBe(502);
  expect(failed.body.error).toContain('repair');
});

test('list, get, delete per tenant; another tenant sees 404; a run with agent_id uses its instructions and tier', async () => {
  model.script({ reply: draft({ name: 'Adder', tier: 'deep', lane: 'mid-strong' }) });
  const made = await vibe('An agent that adds numbers carefully.');
  const other = (await h.key(['runtime:chat'])).apiKey;
  expect((await h.req('GET', `/v1/agents/${made.body.id}`, { key: other })).status).toBe(404);
  expect((await h.req('DELETE', `/v1/agents/${made.body.id}`, { key: other })).status).toBe(404);
  expect((await h.req('GET', '/v1/agents', { key: other })).body.data).toEqual([]);
  expect(
    (await h.req('POST', '/v1/capabilities/agent', { key: other, body: { query: 'hi', agent_id: made.body.id } }))
      .status,
  ).toBe(404);
  const list = await h.req('GET', '/v1/agents', { key });
  expect(list.body.data.map((a: { id: string }) => a.id)).toContain(made.body.id);

  model.script({ reply: 'Sum is 5.' });
  const run = await h.req('POST', '/v1/capabilities/agent', {
    key,
    body: { query: 'What is 2 + 3?', agent_id: made.body.id, wait_s: 60 },
  });
  expect(run.status).toBe(200);
  expect(run.body).toMatchObject({
    status: 'completed',
    answer: 'Sum is 5.',
    agent_id: made.body.id,
    tier: { name: 'deep', lane: 'mid-strong', tools: ['calculator'], max_steps: 4 },
  });
  expect(system(model.chats.at(-1)!)).toContain('Check every line total with the calculator');

  expect((await h.req('DELETE', `/v1/agents/${made.body.id}`, { key })).status).toBe(200);
  expect((await h.req('GET', `/v1/agents/${made.body.id}`, { key })).status).toBe(404);
});

test('bad input names the field', async () => {
  const r = await h.req('POST', '/v1/agents/vibe', { key, body: { description: 'short' } });
  expect(r.status).toBe(400);
  expect(JSON.stringify(r.body.details)).toContain('body.description');
  expect((await h.req('GET', '/v1/agents/not-an-id', { key })).status).toBe(400);
});

test('Idempotency-Key: a retry gets the same definition without a second model call', async () => {
  model.script({ reply: draft({ name: 'Once' }) });
  const headers = { 'idempotency-key': 'vibe-once-1' };
  const body = { description: 'An agent written exactly once.' };
  const a = await h.req('POST', '/v1/agents/vibe', { key, body, headers });
  const calls = model.chats.length;
  const b = await h.req('POST', '/v1/agents/vibe', { key, body, headers });
  expect(a.status).toBe(201);
  expect(b.body.id).toBe(a.body.id);
  expect(b.headers.get('idempotent-replayed')).toBe('true');
  expect(model.chats.length).toBe(calls);
});
