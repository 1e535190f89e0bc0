import OpenAI from 'openai';
import { FAKE_PNG_B64, type FakeOpenAI } from '../helpers/fake-openai';
import { contractErrors } from '../helpers/openai-contract';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';

// OpenAI's stored chat completions (`store: true`, then list, retrieve, update, delete and the request's messages)
// against the real database, with a fake OpenAI-compatible upstream answering.

let h: Harness;
let fake: FakeOpenAI;
let key: string;
let client: OpenAI;

withFakeUpstream({ scopes: ['runtime:chat'], resetEach: { reply: 'Stored answer' } }, (up) => {
  ({ fake, h, key } = up);
  client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
});

const ask = (content: string) => [{ role: 'user' as const, content }];
const paths = (body: { details?: Array<{ path: string }> }) => (body.details ?? []).map((d) => d.path).sort();
/** A fresh tenant's client (its own stored completions). */
async function tenantClient(): Promise<OpenAI> {
  const k = (await h.key(['runtime:chat'])).apiKey;
  return new OpenAI({ baseURL: `${h.url}/v1`, apiKey: k, maxRetries: 0 });
}

describe('stored chat completions', () => {
  test('store: true keeps the completion as answered; retrieve, messages, update and delete with the SDK', async () => {
    const made = await client.chat.completions.create({
      model: 'mid',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Keep this', name: 'ada' },
      ],
      store: true,
      metadata: { run: 'r1', team: 'ops' },
    });
    // Neither field goes upstream: storing is ours.
    expect(fake.chats.at(-1)!.body).not.toHaveProperty('store');
    expect(fake.chats.at(-1)!.body).not.toHaveProperty('metadata');

    const got = await client.chat.completions.retrieve(made.id);
    expect(contractErrors('CreateChatCompletionResponse', got)).toEqual([]);
    const { metadata, request_id, ...asAnswered } = got as typeof got & { metadata: unknown; request_id: string };
    expect(asAnswered).toEqual(made);
    expect(metadata).toEqual({ run: 'r1', team: 'ops' });
    expect(request_id).toMatch(/^req_/);

    const messages = await client.chat.completions.messages.list(made.id);
    expect(messages.data).toEqual([
      { id: `${made.id}-0`, role: 'system', content: 'Be brief.', name: null, content_parts: null },
      { id: `${made.id}-1`, role: 'user', content: 'Keep this', name: 'ada', content_parts: null },
    ]);

    const updated = await client.chat.completions.update(made.id, { metadata: { run: 'r2' } });
    expect((updated as unknown as { metadata: unknown }).metadata).toEqual({ run: 'r2' });
    expect(((await client.chat.completions.retrieve(made.id)) as unknown as { metadata: unknown }).metadata).toEqual({
      run: 'r2',
    });

    const deleted = await client.chat.completions.delete(made.id);
    expect(contractErrors('ChatCompletionDeleted', deleted)).toEqual([]);
    expect(deleted).toEqual({ object: 'chat.completion.deleted', id: made.id, deleted: true });
    for (const [method, path] of [
      ['GET', `/v1/chat/completions/${made.id}`],
      ['GET', `/v1/chat/completions/${made.id}/messages`],
      ['DELETE', `/v1/chat/completions/${made.id}`],
    ])
      expect((await h.req(method, path, { key })).status).toBe(404);
  });

  test('without store: true nothing is kept (absent or false)', async () => {
    const c = await tenantClient();
    const plain = await c.chat.completions.create({ model: 'mid', messages: ask('a') });
    const off = await c.chat.completions.create({
      model: 'mid',
      messages: ask('b'),
      store: false,
      metadata: { x: 'y' },
    });
    for (const id of [plain.id, off.id])
      await expect(c.chat.completions.retrieve(id)).rejects.toMatchObject({ status: 404 });
    expect((await c.chat.completions.list()).data).toEqual([]);
  });

  test('a streamed completion is stored as the stream made it, before its last chunk', async () => {
    fake.script({ reply: 'Streamed and kept', usage: { prompt_tokens: 7, completion_tokens: 3 } });
    const stream = await client.chat.completions.create({
      model: 'svc-oracle',
      messages: ask('Stream it'),
      stream: true,
      store: true,
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    const got = await client.chat.completions.retrieve(chunks[0].id);
    expect(contractErrors('CreateChatCompletionResponse', got)).toEqual([]);
    expect(got.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: 'Streamed and kept', refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ]);
    expect(got.created).toBe(chunks[0].created);
    expect(got.model).toBe('svc-oracle');
    expect(got.usage).toEqual({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
    expect((got as unknown as { meta: { provider: string } }).meta.provider).toBe('default');
  });

  test('streamed tool calls, log probabilities and several choices are stored whole', async () => {
    fake.script({ toolCalls: [{ id: 'call_w', name: 'get_weather', arguments: { city: 'Bergen' } }] });
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
    ];
    const calls = await client.chat.completions.create({
      model: 'svc-oracle',
      messages: ask('Weather?'),
      tools,
      stream: true,
      store: true,
    });
    let id = '';
    for await (const c of calls) id = c.id;
    const called = await client.chat.completions.retrieve(id);
    expect(called.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: {
        content: null,
        tool_calls: [
          { id: 'call_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Bergen"}' } },
        ],
      },
    });

    fake.script({ reply: 'Yes indeed' });
    const lp = await client.chat.completions.create({
      model: 'mid',
      messages: ask('Sure?'),
      logprobs: true,
      stream: true,
      store: true,
    });
    const tokens: string[] = [];
    for await (const c of lp) {
      id = c.id;
      tokens.push(...(c.choices[0]?.logprobs?.content ?? []).map((t) => t.token));
    }
    const withLogprobs = await client.chat.completions.retrieve(id);
    expect(withLogprobs.choices[0].logprobs?.content?.map((t) => t.token)).toEqual(tokens);
    expect(tokens.join('')).toBe('Yes indeed');

    fake.script({ reply: 'a b c', chunkDelayMs: 2 }, { reply: 'x y', chunkDelayMs: 3 });
    const two = await client.chat.completions.create({
      model: 'mid',
      messages: ask('Two ways'),
      n: 2,
      stream: true,
      store: true,
    });
    const text = ['', ''];
    for await (const c of two) {
      id = c.id;
      for (const ch of c.choices) text[ch.index] += ch.delta?.content ?? '';
    }
    const both = await client.chat.completions.retrieve(id);
    expect(both.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, text[0], 'stop'],
      [1, text[1], 'stop'],
    ]);
    expect(new Set(text)).toEqual(new Set(['a b c', 'x y']));
  });

  test('a failed or broken answer is not stored', async () => {
    const c = await tenantClient();
    fake.script({ status: 500 });
    await expect(c.chat.completions.create({ model: 'mid', messages: ask('fail'), store: true })).rejects.toMatchObject(
      { status: 502 },
    );
    fake.script({ reply: 'one two three four five six', dropAfterChunks: 2 });
    const broken = await c.chat.completions.create({ model: 'mid', messages: ask('drop'), stream: true, store: true });
    await expect(
      (async () => {
        for await (const _chunk of broken) void _chunk;
      })(),
    ).rejects.toBeDefined();
    expect((await c.chat.completions.list()).data).toEqual([]);
  });

  test('list: oldest first, desc, pages with after, the SDK’s auto-pagination, model and metadata filters', async () => {
    const c = await tenantClient();
    const ids: string[] = [];
    for (const [i, model, meta] of [
      [0, 'mid', { env: 'prod', team: 'a' }],
      [1, 'svc-oracle', { env: 'prod', team: 'b' }],
      [2, 'mid', { env: 'dev', team: 'a' }],
      [3, 'mid', {}],
    ] as const)
      ids.push(
        (await c.chat.completions.create({ model, messages: ask(`q${i}`), store: true, metadata: { ...meta } })).id,
      );

    const all = await c.chat.completions.list();
    expect(all.data.map((x) => x.id)).toEqual(ids);
    const body = (await h.req('GET', '/v1/chat/completions', { key: c.apiKey! })).body;
    expect(contractErrors('ChatCompletionList', body)).toEqual([]);
    expect((await c.chat.completions.list({ order: 'desc' })).data.map((x) => x.id)).toEqual([...ids].reverse());

    const first = await c.chat.completions.list({ limit: 3 });
    expect(first.data.map((x) => x.id)).toEqual(ids.slice(0, 3));
    expect(first.hasNextPage()).toBe(true);
    const rest = await c.chat.completions.list({ limit: 3, after: ids[2] });
    expect(rest.data.map((x) => x.id)).toEqual([ids[3]]);
    expect(rest.hasNextPage()).toBe(false);
    const walked: string[] = [];
    for await (const x of c.chat.completions.list({ limit: 1 })) walked.push(x.id);
    expect(walked).toEqual(ids);

    expect((await c.chat.completions.list({ model: 'mid' })).data.map((x) => x.id)).toEqual([ids[0], ids[2], ids[3]]);
    expect((await c.chat.completions.list({ metadata: { env: 'prod' } })).data.map((x) => x.id)).toEqual(
      ids.slice(0, 2),
    );
    expect((await c.chat.completions.list({ metadata: { env: 'prod', team: 'b' } })).data.map((x) => x.id)).toEqual([
      ids[1],
    ]);
    expect((await c.chat.completions.list({ metadata: { env: 'none' } })).data).toEqual([]);
    const raw = await h.req('GET', '/v1/chat/completions?metadata%5Bteam%5D=a&model=mid&order=desc', {
      key: c.apiKey!,
    });
    expect(raw.body.data.map((x: { id: string }) => x.id)).toEqual([ids[2], ids[0]]);
    expect(raw.body).toMatchObject({ object: 'list', first_id: ids[2], last_id: ids[0], has_more: false });
  });

  test('messages: content parts kept, text joined; paged with after, limit and order', async () => {
    const image = `data:image/png;base64,${FAKE_PNG_B64}`;
    const made = await client.chat.completions.create({
      model: 'mid',
      messages: [
        { role: 'system', content: 'One' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Two' },
            { type: 'image_url', image_url: { url: image } },
            { type: 'text', text: 'Three' },
          ],
        },
        { role: 'assistant', content: 'Four' },
        { role: 'user', content: 'Five' },
      ],
      store: true,
    });
    const list = await h.req('GET', `/v1/chat/completions/${made.id}/messages`, { key });
    expect(list.status).toBe(200);
    expect(list.body.data[1]).toEqual({
      id: `${made.id}-1`,
      role: 'user',
      content: 'Two\nThree',
      name: null,
      content_parts: [
        { type: 'text', text: 'Two' },
        { type: 'image_url', image_url: { url: image } },
        { type: 'text', text: 'Three' },
      ],
    });
    const page = await h.req('GET', `/v1/chat/completions/${made.id}/messages?limit=2`, { key });
    expect(page.body).toMatchObject({ first_id: `${made.id}-0`, last_id: `${made.id}-1`, has_more: true });
    const next = await h.req('GET', `/v1/chat/completions/${made.id}/messages?limit=2&after=${made.id}-1`, { key });
    expect(next.body.data.map((m: { content: string }) => m.content)).toEqual(['Four', 'Five']);
    expect(next.body.has_more).toBe(false);
    const desc = await h.req('GET', `/v1/chat/completions/${made.id}/messages?order=desc&limit=1`, { key });
    expect(desc.body.data.map((m: { id: string }) => m.id)).toEqual([`${made.id}-3`]);
    const walked: string[] = [];
    for await (const m of client.chat.completions.messages.list(made.id, { limit: 1 })) walked.push(m.id);
    expect(walked).toEqual([0, 1, 2, 3].map((i) => `${made.id}-${i}`));
    const unknown = await h.req('GET', `/v1/chat/completions/${made.id}/messages?after=${made.id}-9`, { key });
    expect([unknown.status, paths(unknown.body)]).toEqual([400, ['query.after']]);
  });

  test('the utility and commons lanes store too, listed by their model', async () => {
    const c = await tenantClient();
    const apiKey = c.apiKey!;
    const micro = await h.req('POST', '/v1/micro/chat/completions', {
      key: apiKey,
      body: { messages: ask('tiny'), store: true, metadata: { lane: 'micro' } },
    });
    expect(micro.status).toBe(200);
    const got = await h.req('GET', `/v1/chat/completions/${micro.body.id}`, { key: apiKey });
    expect(got.body).toMatchObject({ id: micro.body.id, model: 'micro', metadata: { lane: 'micro' } });
    expect((await c.chat.completions.list({ model: 'micro' })).data.map((x) => x.id)).toEqual([micro.body.id]);
    const commons = await h.req('POST', '/v1/slm/commons/completions', {
      key: apiKey,
      body: { messages: ask('tools?'), store: true },
    });
    expect(commons.status).toBe(200);
    const kept = await h.req('GET', `/v1/chat/completions/${commons.body.id}`, { key: apiKey });
    expect(kept.body).toMatchObject({ id: commons.body.id, model: 'slm-fast', choices: commons.body.choices });
  });

  test('another tenant’s stored completion is 404 everywhere and never listed; a key without runtime:chat is 403', async () => {
    const made = await client.chat.completions.create({ model: 'mid', messages: ask('mine'), store: true });
    const other = await tenantClient();
    const otherKey = other.apiKey!;
    for (const [method, path, body] of [
      ['GET', `/v1/chat/completions/${made.id}`, undefined],
      ['GET', `/v1/chat/completions/${made.id}/messages`, undefined],
      ['POST', `/v1/chat/completions/${made.id}`, { metadata: { stolen: 'yes' } }],
      ['DELETE', `/v1/chat/completions/${made.id}`, undefined],
    ] as const) {
      const r = await h.req(method, path, { key: otherKey, body });
      expect([method, path, r.status, r.body.code]).toEqual([method, path, 404, 'not_found']);
    }
    expect((await other.chat.completions.list()).data).toEqual([]);
    const after = await h.req('GET', `/v1/chat/completions?after=${made.id}`, { key: otherKey });
    expect([after.status, paths(after.body)]).toEqual([400, ['query.after']]);
    expect(((await client.chat.completions.retrieve(made.id)) as unknown as { metadata: unknown }).metadata).toEqual(
      {},
    );

    const modelsOnly = (await h.key(['runtime:models'])).apiKey;
    for (const [method, path] of [
      ['GET', '/v1/chat/completions'],
      ['GET', `/v1/chat/completions/${made.id}`],
    ])
      expect((await h.req(method, path, { key: modelsOnly })).status).toBe(403);
  });

  test('bad input is a 400 naming the field; nothing is stored', async () => {
    const c = await tenantClient();
    const apiKey = c.apiKey!;
    const create = (extra: Record<string, unknown>) =>
      h.req('POST', '/v1/chat/completions', { key: apiKey, body: { model: 'mid', messages: ask('x'), ...extra } });
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ store: 'yes' }, 'body.store'],
      [{ store: true, metadata: { k: 'v'.repeat(513) } }, 'body.metadata.k'],
      [
        { store: true, metadata: Object.fromEntries(Array.from({ length: 17 }, (_x, i) => [`k${i}`, 'v'])) },
        'body.metadata',
      ],
      [{ store: true, metadata: { k: 5 } }, 'body.metadata.k'],
      [{ store: true, metadata: ['a'] }, 'body.metadata'],
    ];
    for (const [extra, path] of bad) {
      const r = await create(extra);
      expect([JSON.stringify(extra).slice(0, 40), r.status, paths(r.body)]).toEqual([
        JSON.stringify(extra).slice(0, 40),
        400,
        [path],
      ]);
    }
    expect((await c.chat.completions.list()).data).toEqual([]);

    const made = (await create({ store: true })).body;
    const update = (body: unknown) => h.req('POST', `/v1/chat/completions/${made.id}`, { key: apiKey, body });
    expect(paths((await update({})).body)).toEqual(['body.metadata']);
    expect(paths((await update({ metadata: { k: 'v'.repeat(513) } })).body)).toEqual(['body.metadata.k']);
    const nul = await h.req('POST', `/v1/chat/completions/${made.id}`, {
      key: apiKey,
      raw: '{"metadata":{"k":"a\\u0000b"}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(nul.status).toBe(400);
    expect(((await c.chat.completions.retrieve(made.id)) as unknown as { metadata: unknown }).metadata).toEqual({});

    const list = (q: string) => h.req('GET', `/v1/chat/completions?${q}`, { key: apiKey });
    const badQueries: Array<[string, string]> = [
      ['limit=0', 'query.limit'],
      ['limit=101', 'query.limit'],
      ['order=sideways', 'query.order'],
      ['after=resp_1', 'query.after'],
      ['after=chatcmpl-unknown', 'query.after'],
      [`metadata[k]=${'v'.repeat(513)}`, 'query.metadata'],
      ['metadata[k]=a&metadata[k]=b', 'query.metadata[k]'],
      ['metadata[k]=a%00b', 'query.metadata.k'],
    ];
    for (const [q, path] of badQueries) {
      const r = await list(q);
      expect([q, r.status, paths(r.body)]).toEqual([q, 400, [path]]);
    }
    for (const id of ['nope', 'chatcmpl-', `chatcmpl-${'a'.repeat(101)}`]) {
      const r = await h.req('GET', `/v1/chat/completions/${id}`, { key: apiKey });
      expect([id, r.status, paths(r.body)]).toEqual([id, 400, ['path.id']]);
    }
  });
});
