import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import OpenAI from 'openai';
import sharp from 'sharp';
import { imageTokens } from '../../activities/providers/token-count';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { contractErrors } from '../helpers/openai-contract';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';

// POST /v1/responses/input_tokens: what a response with the same body would send, counted without a model call.

let h: Harness;
let fake: FakeOpenAI;
let key: string;
let client: OpenAI;

withFakeUpstream({ scopes: ['runtime:chat'], resetEach: { reply: 'Fine.' } }, (up) => {
  ({ fake, h, key } = up);
  client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
});

const count = async (body: Record<string, unknown>) =>
  (await client.responses.inputTokens.count({ model: 'mid', ...body } as never)).input_tokens;
const png = async (width: number, height: number) =>
  (
    await sharp({ create: { width, height, channels: 3, background: '#336699' } })
      .png()
      .toBuffer()
  ).toString('base64');

test('counts what the response would send: the persona, the input, in OpenAI’s contract; no model call', async () => {
  const res = await client.responses.inputTokens.count({ model: 'mid', input: 'Hello' });
  expect(contractErrors('TokenCountsResource', res)).toEqual([]);
  expect(res.object).toBe('response.input_tokens');
  // The persona's system message is part of what the lane gets.
  expect(res.input_tokens).toBeGreaterThan(countTokens('Hello') + 50);
  const longer = await count({ input: 'Hello there, my friend' });
  expect(longer - res.input_tokens).toBe(countTokens('Hello there, my friend') - countTokens('Hello'));
  // A text of megabytes is counted a slice at a time (the event loop gets turns), to the same total.
  const big = Array.from({ length: 20_000 }, (_x, i) => `Line ${i}: the quick brown fox,  jumps.  `).join('\n');
  expect((await count({ input: big })) - res.input_tokens).toBe(countTokens(big) - countTokens('Hello'));
  // A special token's text in a client's message is counted as the plain text it is (it was a 500).
  const special = 'a <|endoftext|> b';
  expect((await count({ input: special })) - res.input_tokens).toBe(
    countTokens(special, { disallowedSpecial: new Set() }) - countTokens('Hello'),
  );
  // What it counts is what a response sends: the same body answered by the lane reports as much.
  fake.script({ reply: 'Fine.', usage: null });
  expect(fake.chats.length).toBe(0);
  const sent = await client.responses.create({ model: 'mid', input: 'Hello' });
  const messages = fake.chats[0].body.messages as Array<{ role: string; content: string }>;
  const expected = 3 + messages.reduce((n, m) => n + 3 + countTokens(m.role) + countTokens(m.content), 0);
  expect(res.input_tokens).toBe(expected);
  expect(sent.status).toBe('completed');
});

/** OpenAI's count of the messages the lane got last (3 a message and its role, 3 to prime the reply). */
const countSent = () =>
  3 +
  (fake.chats.at(-1)!.body.messages as Array<{ role: string; content: string }>).reduce(
    (n, m) => n + 3 + countTokens(m.role) + countTokens(m.content),
    0,
  );

test('instructions, earlier turns, tools and images add what they weigh', async () => {
  const base = await count({ input: 'Hi' });
  const first = await client.responses.create({ model: 'mid', input: 'Remember the number 42.' });
  for (const body of [
    { input: 'Hi', instructions: 'Answer in French.' },
    { input: 'Hi', previous_response_id: first.id },
  ]) {
    const counted = await count(body);
    await client.responses.create({ model: 'mid', ...body } as never);
    expect(counted).toBe(countSent());
    expect(counted).toBeGreaterThan(base);
  }
  const tools = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } }];
  expect(await count({ input: 'Hi', tools })).toBeGreaterThan(base + 5);

  const image = (b64: string, detail: string) => ({
    role: 'user',
    content: [
      { type: 'input_text', text: 'Hi' },
      { type: 'input_image', image_url: `data:image/png;base64,${b64}`, detail },
    ],
  });
  const small = await png(100, 100);
  const wide = await png(1600, 800);
  const text = await count({ input: [{ role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }] });
  expect((await count({ input: [image(small, 'low')] })) - text).toBe(85);
  expect((await count({ input: [image(small, 'high')] })) - text).toBe(85 + 170);
  // 1600×800 → shortest side 768: 1536×768, 3×2 tiles.
  expect((await count({ input: [image(wide, 'auto')] })) - text).toBe(85 + 170 * 6);
  expect(fake.chats.length).toBe(3);
});

test('OpenAI’s image charge: low 85; fitted to 2048 and a 768 shortest side, 170 a tile', () => {
  expect(imageTokens(4096, 4096, 'low')).toBe(85);
  expect(imageTokens(1024, 1024)).toBe(85 + 170 * 4);
  expect(imageTokens(2048, 4096, 'high')).toBe(85 + 170 * 6);
  expect(imageTokens(512, 512)).toBe(85 + 170);
});

test('refusals as a response’s: 400 naming the field, unknown references 404, no scope 403; never a model call', async () => {
  const post = (body: unknown, k = key) => h.req('POST', '/v1/responses/input_tokens', { key: k, body });
  const before = fake.chats.length;
  expect((await post({ model: 'mid' })).status).toBe(400);
  const badTool = await post({ model: 'mid', input: 'x', tools: [{ type: 'code_interpreter' }] });
  expect(badTool.status).toBe(400);
  const unknown = await post({ model: 'mid', input: 'x', previous_response_id: 'resp_unknown1' });
  expect([unknown.status, unknown.body.details?.[0]?.path]).toEqual([404, 'body.previous_response_id']);
  expect((await post({ model: 'nope', input: 'x' })).status).toBe(404);
  const modelsOnly = (await h.key(['runtime:models'])).apiKey;
  expect((await post({ model: 'mid', input: 'x' }, modelsOnly)).status).toBe(403);
  expect(fake.chats.length).toBe(before);
});
