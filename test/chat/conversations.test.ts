import OpenAI from 'openai';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { contractErrors } from '../helpers/openai-contract';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';

// OpenAI's Conversations API against the real database, and responses made in a conversation, against a fake
// OpenAI-compatible upstream.

let h: Harness;
let fake: FakeOpenAI;
let key: string;
let client: OpenAI;

withFakeUpstream(
  { scopes: ['runtime:chat'], resetEach: { echo: true }, env: { SVC_CHAT_BODY_LIMIT: '20000' } },
  (up) => {
    ({ fake, h, key } = up);
    client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
  },
);

const paths = (body: { details?: Array<{ path: string }> }) => (body.details ?? []).map((d) => d.path).sort();
/** The messages the upstream got, after the persona's system message. */
const sent = () =>
  fake.chats
    .at(-1)!
    .body.messages.slice(1)
    .map((m: { role: string; content: string }) => `${m.role}: ${m.content}`);

describe('/v1/conversations', () => {
  test('create, retrieve, update, items (list, add, retrieve, delete) and delete with the SDK, in OpenAI’s contract', async () => {
    const conv = await client.conversations.create({
      metadata: { topic: 'demo' },
      items: [{ type: 'message', role: 'user', content: 'Hello, I am Ada.' }],
    });
    expect(contractErrors('ConversationResource', conv)).toEqual([]);
    expect(conv).toMatchObject({ object: 'conversation', metadata: { topic: 'demo' } });
    expect(conv.id).toMatch(/^conv_/);
    expect(await client.conversations.retrieve(conv.id)).toEqual(conv);
    const updated = await client.conversations.update(conv.id, { metadata: { topic: 'renamed' } });
    expect(updated.metadata).toEqual({ topic: 'renamed' });

    const added = await client.conversations.items.create(conv.id, {
      items: [
        { type: 'message', role: 'assistant', content: 'Hello Ada.' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Remember me.' }] },
      ],
    });
    expect(added.data).toHaveLength(2);
    const list = await h.req('GET', `/v1/conversations/${conv.id}/items?order=asc`, { key });
    expect(contractErrors('ConversationItemList', list.body)).toEqual([]);
    expect(list.body.data.map((i: { role: string }) => i.role)).toEqual(['user', 'assistant', 'user']);
    const newest = await h.req('GET', `/v1/conversations/${conv.id}/items?limit=1`, { key });
    expect(newest.body).toMatchObject({ has_more: true, first_id: added.data[1].id });
    const next = await h.req('GET', `/v1/conversations/${conv.id}/items?limit=5&after=${newest.body.last_id}`, { key });
    expect(next.body.data.map((i: { role: string }) => i.role)).toEqual(['assistant', 'user']);

    const one = await client.conversations.items.retrieve(added.data[0].id!, { conversation_id: conv.id });
    expect(one).toMatchObject({ type: 'message', role: 'assistant' });
    const afterDelete = await client.conversations.items.delete(added.data[0].id!, { conversation_id: conv.id });
    expect(afterDelete.id).toBe(conv.id);
    expect((await h.req('GET', `/v1/conversations/${conv.id}/items/${added.data[0].id}`, { key })).status).toBe(404);

    const deleted = await client.conversations.delete(conv.id);
    expect(contractErrors('DeletedConversationResource', deleted)).toEqual([]);
    expect((await h.req('GET', `/v1/conversations/${conv.id}`, { key })).status).toBe(404);
    expect((await h.req('GET', `/v1/conversations/${conv.id}/items`, { key })).status).toBe(404);
  });

  test('responses in a conversation read its items and add their input and output (JSON and stream)', async () => {
    const conv = await client.conversations.create({
      items: [{ type: 'message', role: 'developer', content: 'Answer briefly.' }],
    });
    const first = await client.responses.create({ model: 'mid', input: 'My name is Ada.', conversation: conv.id });
    expect(contractErrors('Response', first)).toEqual([]);
    expect(first.conversation).toEqual({ id: conv.id });
    const firstAnswer = first.output_text;

    const stream = await client.responses.create({
      model: 'mid',
      input: 'What is my name?',
      conversation: { id: conv.id },
      stream: true,
    });
    for await (const _e of stream) void _e;
    const upstream = sent();
    // The developer item is client guidance inside the one system message, as on every persona route.
    expect(fake.chats.at(-1)!.body.messages[0].content).toContain('Answer briefly.');
    expect(upstream).toContain('user: My name is Ada.');
    expect(upstream).toContain(`assistant: ${firstAnswer}`);
    expect(upstream.at(-1)).toBe('user: What is my name?');

    const items = await h.req('GET', `/v1/conversations/${conv.id}/items?order=asc`, { key });
    expect(contractErrors('ConversationItemList', items.body)).toEqual([]);
    expect(items.body.data.map((i: { role: string }) => i.role)).toEqual([
      'developer',
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    // store: false keeps no response, yet the conversation gets the turn.
    const unstored = await client.responses.create({
      model: 'mid',
      input: 'Third.',
      conversation: conv.id,
      store: false,
    });
    expect((await h.req('GET', `/v1/responses/${unstored.id}`, { key })).status).toBe(404);
    expect((await h.req('GET', `/v1/conversations/${conv.id}/items?limit=100`, { key })).body.data).toHaveLength(7);
  });

  test('refusals: fields named; unknown, another tenant’s and too large conversations; nothing goes upstream', async () => {
    const conv = await client.conversations.create({});
    const stranger = (await h.key(['runtime:chat'])).apiKey;
    const post = (body: unknown, k = key) => h.req('POST', '/v1/responses', { key: k, body });
    const both = await post({ input: 'x', conversation: conv.id, previous_response_id: 'resp_x' });
    expect(both.status).toBe(400);
    expect(paths(both.body)).toEqual(['body.conversation']);
    const malformed = await post({ input: 'x', conversation: 'chat_1' });
    expect(malformed.status).toBe(400);
    for (const r of [
      await post({ input: 'x', conversation: 'conv_unknown' }),
      await post({ input: 'x', conversation: conv.id }, stranger),
    ]) {
      expect(r.status).toBe(404);
      expect(paths(r.body)).toEqual(['body.conversation']);
    }
    expect((await h.req('GET', `/v1/conversations/${conv.id}`, { key: stranger })).status).toBe(404);
    expect(
      (
        await h.req('POST', `/v1/conversations/${conv.id}/items`, {
          key: stranger,
          body: { items: [{ role: 'user', content: 'x' }] },
        })
      ).status,
    ).toBe(404);
    expect((await h.req('DELETE', `/v1/conversations/${conv.id}`, { key: stranger })).status).toBe(404);

    const tooMany = await h.req('POST', `/v1/conversations/${conv.id}/items`, {
      key,
      body: { items: Array.from({ length: 21 }, () => ({ role: 'user', content: 'x' })) },
    });
    expect(tooMany.status).toBe(400);
    expect(paths(tooMany.body)).toEqual(['body.items']);
    const badCursor = await h.req('GET', `/v1/conversations/${conv.id}/items?after=msg_nope&limit=0`, { key });
    expect(badCursor.status).toBe(400);
    expect(paths(badCursor.body)).toEqual(['query.limit']);
    expect((await h.req('GET', `/v1/conversations/${conv.id}/items?after=msg_nope`, { key })).status).toBe(400);
    expect((await h.req('POST', `/v1/conversations/${conv.id}`, { key, body: { metadata: { a: 1 } } })).status).toBe(
      400,
    );

    // Items over SVC_CHAT_BODY_LIMIT (20,000 bytes here): a response in it is 413, naming the conversation.
    await client.conversations.items.create(conv.id, {
      items: [
        { type: 'message', role: 'user', content: 'a'.repeat(12_000) },
        { type: 'message', role: 'user', content: 'b'.repeat(12_000) },
      ],
    });
    const big = await post({ input: 'x', conversation: conv.id });
    expect(big.status).toBe(413);
    expect(paths(big.body)).toEqual(['body.conversation']);
    expect(fake.chats).toHaveLength(0);
  });
});
