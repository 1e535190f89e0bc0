import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { contractErrors } from '../helpers/openai-contract';

// Issue 10 item 4: every OpenAI-compatible answer validates against OpenAI's published schemas
// (read from ../shared/contracts/openai-openapi.json with Ajv), not against our own idea of them.

let h: Harness;
let fake: FakeOpenAI;
let key: string;

withFakeUpstream(
  { scopes: ['runtime:chat', 'runtime:models'], resetEach: { reply: 'Contract answer.' } },
  (up) => ({ fake, h, key } = up),
);

const COMPLETION_ROUTES = [
  '/v1/chat/completions',
  '/v1/slm/chat/completions',
  '/v1/micro/chat/completions',
  '/v1/mid/chat/completions',
];
const messages = [{ role: 'user', content: 'Say something.' }];

/** The JSON payloads of an SSE body (without the [DONE] terminator). */
function sseChunks(text: string): unknown[] {
  const data = text
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trim());
  expect(data.at(-1)).toBe('[DONE]');
  return data.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d));
}

test('the validator is strict enough to fail: a response without choices[].logprobs or message.refusal is refused', () => {
  const ok = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [
      { index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content: 'x', refusal: null } },
    ],
  };
  expect(contractErrors('CreateChatCompletionResponse', ok)).toEqual([]);
  const { logprobs: _drop, ...noLogprobs } = ok.choices[0];
  expect(contractErrors('CreateChatCompletionResponse', { ...ok, choices: [noLogprobs] })).not.toEqual([]);
  expect(
    contractErrors('CreateChatCompletionResponse', {
      ...ok,
      choices: [{ ...ok.choices[0], message: { role: 'assistant', content: 'x' } }],
    }),
  ).not.toEqual([]);
});

test.each(COMPLETION_ROUTES)(
  'POST %s (non-streaming) validates against CreateChatCompletionResponse',
  async (route) => {
    const r = await h.req('POST', route, { key, body: { messages } });
    expect(r.status).toBe(200);
    expect(contractErrors('CreateChatCompletionResponse', r.body)).toEqual([]);
  },
);

test.each(COMPLETION_ROUTES)(
  'POST %s with stream: true: every chunk validates against CreateChatCompletionStreamResponse',
  async (route) => {
    const r = await h.req('POST', route, {
      key,
      body: { messages, stream: true, stream_options: { include_usage: true } },
    });
    expect(r.status).toBe(200);
    const chunks = sseChunks(r.text);
    expect(chunks.length).toBeGreaterThan(1);
    for (const [i, chunk] of chunks.entries())
      expect({ i, errors: contractErrors('CreateChatCompletionStreamResponse', chunk) }).toEqual({ i, errors: [] });
    expect(fake.chats.length).toBeGreaterThan(0);
  },
);

test('POST /v1/slm/commons/completions validates against CreateChatCompletionResponse', async () => {
  const r = await h.req('POST', '/v1/slm/commons/completions', { key, body: { messages } });
  expect(r.status).toBe(200);
  expect(contractErrors('CreateChatCompletionResponse', r.body)).toEqual([]);
});

test.each(['/v1/models', '/v1/cloud/models', '/v1/slm/models'])(
  'GET %s validates against ListModelsResponse',
  async (route) => {
    const r = await h.req('GET', route, { key });
    expect(r.status).toBe(200);
    expect(r.body.data.length).toBeGreaterThan(0);
    expect(contractErrors('ListModelsResponse', r.body)).toEqual([]);
  },
);

test('GET /v1/models/{id} validates against Model', async () => {
  const r = await h.req('GET', '/v1/models/slm-fast', { key });
  expect(r.status).toBe(200);
  expect(contractErrors('Model', r.body)).toEqual([]);
});
