import OpenAI from 'openai';
import sharp from 'sharp';
import { conversationContext } from '../../activities/store/conversations';
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

describe('images made in a conversation', () => {
  test('a response reads no image but the latest (an edit changes it), however many are added; GET lists them whole', async () => {
    const mine = await h.key(['runtime:chat']);
    const k = mine.apiKey;
    const conv = (await h.req('POST', '/v1/conversations', { key: k, body: {} })).body;
    const red = (
      await sharp({ create: { width: 8, height: 8, channels: 3, background: '#ff0000' } })
        .png()
        .toBuffer()
    ).toString('base64');
    const big = (c: string) => c.repeat(700_000);
    const image = (id: string, result: string | null, status = 'completed') => ({
      type: 'image_generation_call',
      id,
      status,
      result,
    });
    // Each ~700 KB item counts a few bytes toward SVC_CHAT_BODY_LIMIT (20,000 here): made images are left out of it.
    for (const item of [
      image('ig_old1', big('A')),
      image('ig_old2', big('B')),
      image('ig_latest', red),
      image('ig_failed', big('C'), 'failed'),
    ]) {
      const added = await h.req('POST', `/v1/conversations/${conv.id}/items`, { key: k, body: { items: [item] } });
      expect(added.status).toBe(200);
    }

    // What a response reads: the latest completed image whole, every other image call without its result.
    const read = (await conversationContext(h.db, mine.tenantId, conv.id, h.config.chatBodyLimit)) as any[];
    expect(read.map((i) => [i.id, i.result === undefined ? 'left out' : i.result])).toEqual([
      ['ig_old1', 'left out'],
      ['ig_old2', 'left out'],
      ['ig_latest', red],
      ['ig_failed', 'left out'],
    ]);
    expect(read[0]).toEqual({ type: 'image_generation_call', id: 'ig_old1', status: 'completed' });
    expect(JSON.stringify(read).length).toBeLessThan(h.config.chatBodyLimit);
    const counted = await h.req('POST', '/v1/responses/input_tokens', {
      key: k,
      body: { conversation: conv.id, input: 'x' },
    });
    expect(counted.status).toBe(200);
    expect(counted.body.input_tokens).toBeGreaterThan(0);

    // The client still gets every item as it was added.
    const listed = await h.req('GET', `/v1/conversations/${conv.id}/items?order=asc`, { key: k });
    expect(listed.body.data.map((i: { result: string }) => i.result.length)).toEqual([
      700_000,
      700_000,
      red.length,
      700_000,
    ]);
    const one = await h.req('GET', `/v1/conversations/${conv.id}/items/ig_old2`, { key: k });
    expect(one.body.result).toBe(big('B'));

    // An edit changes the latest image.
    const edits = () => fake.requests.filter((r) => r.path.endsWith('/images/edits'));
    const askEdit = (id: string) => ({
      toolCalls: [{ id, name: 'image_generation', arguments: { prompt: 'Bluer', edit: true } }],
    });
    const edit = () =>
      h.req('POST', '/v1/responses', {
        key: k,
        body: { conversation: conv.id, input: 'Make it bluer.', tools: [{ type: 'image_generation' }] },
      });
    fake.script(askEdit('e1'), {}, { reply: 'Bluer now.' });
    const edited = await edit();
    expect(edited.status).toBe(200);
    expect(edited.body.output[0]).toMatchObject({ type: 'image_generation_call', status: 'completed' });
    expect(edits()).toHaveLength(1);
    expect(edits()[0].body.files[0].bytes.equals(Buffer.from(red, 'base64'))).toBe(true);

    // A latest image sent back without its result is still the latest: no older image is edited instead.
    await h.req('POST', `/v1/conversations/${conv.id}/items`, {
      key: k,
      body: { items: [image('ig_sent_back', null)] },
    });
    fake.script(askEdit('e2'), { reply: 'I cannot see it.' });
    const blocked = await edit();
    expect(blocked.body.output[0]).toMatchObject({ type: 'image_generation_call', status: 'failed', result: null });
    expect(edits()).toHaveLength(1);
    expect(fake.chats.at(-1)!.body.messages.at(-1).content).toMatch(/sent back without its result/);
  });
});
