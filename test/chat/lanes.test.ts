import OpenAI from 'openai';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';

let h: Harness;
let fake: FakeOpenAI;
let key: string;

withFakeUpstream(
  { scopes: ['runtime:chat', 'runtime:models'], resetEach: { reply: 'ok' } },
  (up) => ({ fake, h, key } = up),
);

describe('models and modules', () => {
  test('GET /v1/models lists the public lanes only (OpenAI list format); cloud and slm listings split them', async () => {
    const client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids).toEqual(['svc-oracle', 'mid', 'mid-strong', 'micro', 'nano', 'slm-fast', 'slm-code', 'slm-reason']);
    const r = await h.req('GET', '/v1/models', { key });
    expect(r.body.object).toBe('list');
    expect(r.body.data[0]).toMatchObject({ id: 'svc-oracle', object: 'model', owned_by: 'svc', available: true });
    expect(r.text).not.toMatch(/gpt-4o/);
    expect((await h.req('GET', '/v1/cloud/models', { key })).body.data.map((m: { id: string }) => m.id)).toEqual([
      'svc-oracle',
      'mid',
      'mid-strong',
      'micro',
      'nano',
    ]);
    expect((await h.req('GET', '/v1/slm/models', { key })).body.data.map((m: { id: string }) => m.id)).toEqual([
      'slm-fast',
      'slm-code',
      'slm-reason',
    ]);
    const chatOnly = (await h.key(['runtime:chat'])).apiKey;
    expect((await h.req('GET', '/v1/models', { key: chatOnly })).status).toBe(403);
  });

  test('GET /v1/models/{id} (the SDK’s models.retrieve): a lane’s model object; any other id 404 model_not_found', async () => {
    const client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
    const listed = (await h.req('GET', '/v1/models', { key })).body.data;
    for (const m of listed) expect(await client.models.retrieve(m.id)).toEqual(m);
    await expect(client.models.retrieve('gpt-4o')).rejects.toMatchObject({ status: 404 });
    const unknown = await h.req('GET', '/v1/models/gpt-4o', { key });
    expect(unknown.body.code).toBe('model_not_found');
    expect(unknown.body.error).toContain('/v1/models');
    const chatOnly = (await h.key(['runtime:chat'])).apiKey;
    expect((await h.req('GET', '/v1/models/svc-oracle', { key: chatOnly })).status).toBe(403);
  });

  test('GET /v1/modules lists built-in skills and modules with their surfaces', async () => {
    const r = await h.req('GET', '/v1/modules', { key });
    expect(r.status).toBe(200);
    expect(r.body.skills.find((s: { id: string }) => s.id === 'storyboard').surfaces).toEqual(['studio']);
    expect(r.body.skills.find((s: { id: string }) => s.id === 'summarize').surfaces).toContain('*');
    expect(r.body.modules.map((m: { id: string }) => m.id)).toContain('sessions');
    expect(r.body.surfaces.find((s: { id: string }) => s.id === 'dev').profiles).toContain('reviewer');
  });
});

describe('utility lanes', () => {
  test('mid/micro/slm pass messages through unchanged: no persona, no memory', async () => {
    const messages = [
      { role: 'system' as const, content: 'You are a terse JSON formatter.' },
      { role: 'user' as const, content: '{"a":1}' },
    ];
    const mid = new OpenAI({ baseURL: `${h.url}/v1/mid`, apiKey: key, maxRetries: 0 });
    const res = await mid.chat.completions.create(
      { model: 'mid-strong', messages },
      { headers: { 'X-Session-ID': 'never-stored', 'X-Svc-Context': 'dev' } },
    );
    expect(res.model).toBe('mid-strong');
    expect(res.choices[0].message.content).toBe('ok');
    expect(fake.chats[0].body.messages).toEqual(messages);
    expect((await h.req('GET', '/v1/sessions', { key })).body.data).toEqual([]);
    const micro = await h.req('POST', '/v1/micro/chat/completions', { key, body: { messages } });
    expect(micro.body.model).toBe('micro');
    expect(micro.body.meta.provider).toBe('default');
    expect(fake.chats[1].body.model).toBe('gpt-4o-mini');
  });

  test('each utility route serves only its own lanes', async () => {
    const r = await h.req('POST', '/v1/micro/chat/completions', {
      key,
      body: { model: 'svc-oracle', messages: [{ role: 'user', content: 'x' }] },
    });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('model_not_found');
    expect(r.body.error).toMatch(/micro, nano/);
    expect(
      (
        await h.req('POST', '/v1/slm/chat/completions', {
          key,
          body: { model: 'mid', messages: [{ role: 'user', content: 'x' }] },
        })
      ).status,
    ).toBe(404);
    expect(fake.chats).toHaveLength(0);
  });

  test('slm lane streams with the openai client', async () => {
    fake.script({ reply: 'small model speaking' });
    const slm = new OpenAI({ baseURL: `${h.url}/v1/slm`, apiKey: key, maxRetries: 0 });
    const stream = await slm.chat.completions.create({
      model: 'slm-code',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    expect(text).toBe('small model speaking');
    expect(fake.chats[0].body.messages).toEqual([{ role: 'user', content: 'x' }]);
  });
});

describe('commons tools lane', () => {
  test('GET /v1/slm/commons/tools lists the eight tools with JSON-schema parameters', async () => {
    const r = await h.req('GET', '/v1/slm/commons/tools', { key });
    expect(r.body.max_tool_calls).toBe(2);
    expect(r.body.data.map((t: { name: string }) => t.name).sort()).toEqual([
      'calculator',
      'datetime',
      'diff',
      'json',
      'markdown',
      'regex',
      'text',
      'token_estimate',
    ]);
    expect(
      r.body.data.find((t: { name: string }) => t.name === 'calculator').parameters.properties.expression.type,
    ).toBe('string');
  });

  test('the model gets at most two tool calls: extra calls are refused and the last round offers no tools', async () => {
    fake.script(
      {
        toolCalls: [
          { name: 'calculator', arguments: { expression: '2 + 3 * 4' } },
          { name: 'regex', arguments: { op: 'match', pattern: '\\d+', text: 'a1 b22 c333' } },
          { name: 'text', arguments: { op: 'upper', text: 'three' } },
        ],
      },
      { reply: 'The answer is 14.' },
    );
    const r = await h.req('POST', '/v1/slm/commons/completions', {
      key,
      body: { messages: [{ role: 'user', content: 'compute' }] },
    });
    expect(r.status).toBe(200);
    expect(r.body.choices[0].message.content).toBe('The answer is 14.');
    expect(r.body.meta.tool_calls).toEqual([
      { name: 'calculator', ok: true },
      { name: 'regex', ok: true },
    ]);
    expect(fake.chats).toHaveLength(2);
    expect(fake.chats[0].body.tools).toHaveLength(8);
    const second = fake.chats[1].body;
    expect(second.tools).toBeUndefined();
    const tools = second.messages.filter((m: { role: string }) => m.role === 'tool');
    expect(tools).toHaveLength(3);
    expect(JSON.parse(tools[0].content)).toEqual({ expression: '2 + 3 * 4', result: '14' });
    expect(JSON.parse(tools[1].content).count).toBe(3);
    expect(tools[2].content).toMatch(/tool-call limit reached/);
    expect(second.messages[1].tool_calls).toHaveLength(3);
  });

  test('one call per round: two rounds, then a forced answer (three upstream calls at most)', async () => {
    fake.script(
      { toolCalls: [{ name: 'token_estimate', arguments: { text: 'hello world' } }] },
      { toolCalls: [{ name: 'calculator', arguments: { expression: 'import({})' } }] },
      { toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] },
    );
    const r = await h.req('POST', '/v1/slm/commons/completions', {
      key,
      body: { model: 'slm-reason', messages: [{ role: 'user', content: 'x' }] },
    });
    expect(r.status).toBe(200);
    expect(fake.chats).toHaveLength(3);
    expect(fake.chats[2].body.tools).toBeUndefined();
    expect(r.body.meta.tool_calls).toEqual([
      { name: 'token_estimate', ok: true },
      { name: 'calculator', ok: false },
    ]);
    expect(r.body.choices[0].finish_reason).toBe('stop');
    const toolMsgs = fake.chats[2].body.messages.filter((m: { role: string }) => m.role === 'tool');
    expect(toolMsgs[1].content).toMatch(/disabled/);
  });

  test('streaming on the commons lane is 400; non-slm lanes are 404', async () => {
    const s = await h.req('POST', '/v1/slm/commons/completions', {
      key,
      body: { stream: true, messages: [{ role: 'user', content: 'x' }] },
    });
    expect(s.status).toBe(400);
    expect(s.body.details[0].path).toBe('body.stream');
    expect(
      (
        await h.req('POST', '/v1/slm/commons/completions', {
          key,
          body: { model: 'svc-oracle', messages: [{ role: 'user', content: 'x' }] },
        })
      ).status,
    ).toBe(404);
    expect(fake.chats).toHaveLength(0);
  });
});
