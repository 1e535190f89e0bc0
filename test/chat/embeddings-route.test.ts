import OpenAI from 'openai';
import { fakeEmbedding, startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai';
import { startExtraApp } from '../helpers/extra-app';
import { contractErrors } from '../helpers/openai-contract';
import { startHarness, type Harness, fields } from '../helpers/harness';

/** POST /v1/embeddings against a real OpenAI-compatible upstream (reverse order: vectors are placed by index). */
let fake: FakeOpenAI;
let h: Harness;
let key: string;
let client: OpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: 'sk-embed', embeddings: { reverse: true } });
  h = await startHarness({
    env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-embed', SVC_EMBEDDING_MODEL: 'emb-upstream' },
  });
  key = (await h.key(['runtime:chat'])).apiKey;
  client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
});
afterAll(async () => {
  await h?.close();
  await fake?.close();
});

const post = (body: unknown, k = key) => h.req('POST', '/v1/embeddings', { key: k, body });
const close = (a: number[], b: number[]) => a.every((x, i) => Math.abs(x - b[i]) < 1e-6);

test('the official SDK (base64 by default, decoded by it) gets each input’s vector in order', async () => {
  const before = fake.embeddingRequests.length;
  const texts = ['red apples', 'green pears', 'blue sky'];
  const res = await client.embeddings.create({ model: 'svc-embed', input: texts });
  expect(res.model).toBe('svc-embed');
  expect(res.data.map((d) => d.index)).toEqual([0, 1, 2]);
  texts.forEach((t, i) => expect(close(res.data[i].embedding, fakeEmbedding(t))).toBe(true));
  expect(res.usage.prompt_tokens).toBeGreaterThan(0);
  const up = fake.embeddingRequests.slice(before);
  expect(up).toHaveLength(1);
  expect(up[0].body).toEqual({ model: 'emb-upstream', input: texts });
  expect(up[0].headers.authorization).toBe('Bearer sk-embed');
});

test('float by default, in OpenAI’s contract; token-id input; base64 is little-endian float32', async () => {
  const r = await post({ input: 'hello world' });
  expect(r.status).toBe(200);
  expect(contractErrors('CreateEmbeddingResponse', r.body)).toEqual([]);
  expect(r.body.model).toBe('svc-embed');
  expect(close(r.body.data[0].embedding, fakeEmbedding('hello world'))).toBe(true);
  expect(JSON.stringify(r.body)).not.toContain('emb-upstream');

  const ids = await post({ input: [[15339, 1917], [9906]] });
  expect(ids.status).toBe(200);
  expect(close(ids.body.data[0].embedding, fakeEmbedding('15339 1917'))).toBe(true);
  expect(close(ids.body.data[1].embedding, fakeEmbedding('9906'))).toBe(true);

  const b64 = await post({ input: 'hello world', encoding_format: 'base64' });
  // (The contract types `embedding` as an array only; OpenAI's base64 answer is a string, as here.)
  expect(typeof b64.body.data[0].embedding).toBe('string');
  const buf = Buffer.from(b64.body.data[0].embedding, 'base64');
  const floats = Array.from({ length: buf.length / 4 }, (_x, i) => buf.readFloatLE(i * 4));
  expect(close(floats, fakeEmbedding('hello world'))).toBe(true);
});

test('200 inputs go out in batches of 64 and come back in order; usage is recorded for the key', async () => {
  const before = fake.embeddingRequests.length;
  const texts = Array.from({ length: 200 }, (_x, i) => `item number ${i} word${i}`);
  const r = await post({ input: texts, user: 'u1' });
  expect(r.status).toBe(200);
  expect(r.body.data).toHaveLength(200);
  r.body.data.forEach((d: { index: number; embedding: number[] }, i: number) => {
    expect(d.index).toBe(i);
    expect(close(d.embedding, fakeEmbedding(texts[i]))).toBe(true);
  });
  const calls = fake.embeddingRequests.slice(before).map((q) => q.body.input.length);
  expect(calls.sort((a, b) => b - a)).toEqual([64, 64, 64, 8]);
  const tokens = r.body.usage.prompt_tokens;
  expect(tokens).toBe(texts.reduce((n, t) => n + Math.ceil(t.length / 4), 0));
});

test('dimensions are passed on; a provider that ignores them is 502, not a vector of the wrong length', async () => {
  const r = await post({ input: 'short', dimensions: 16 });
  expect(r.status).toBe(200);
  expect(r.body.data[0].embedding).toHaveLength(16);
  expect(fake.embeddingRequests.at(-1)!.body.dimensions).toBe(16);
  const deaf = await startFakeOpenAI({ embeddings: { dimensions: false } });
  const app = await startExtraApp(h, { config: { openai: { ...h.config.openai, baseUrl: deaf.url } } });
  try {
    const res = await fetch(`${app.url}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'short', dimensions: 16 }),
    });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: string }).error).toMatch(/64 dimensions, not the 16/);
  } finally {
    await app.close();
    await deaf.close();
  }
});

test.each([
  ['an empty string', { input: '' }, 'body.input'],
  ['an empty list', { input: [] }, 'body.input'],
  ['an empty string in a list', { input: ['a', ''] }, 'body.input.1'],
  ['a list of mixed kinds', { input: ['a', 3] }, 'body.input'],
  ['too many inputs', { input: Array.from({ length: 2049 }, () => 'x') }, 'body.input'],
  ['a negative token id', { input: [1, -2] }, 'body.input.1'],
  ['a bad encoding_format', { input: 'a', encoding_format: 'hex' }, 'body.encoding_format'],
  ['zero dimensions', { input: 'a', dimensions: 0 }, 'body.dimensions'],
])('%s is 400 naming the field, and nothing goes upstream', async (_name, body, path) => {
  const before = fake.embeddingRequests.length;
  const r = await post(body);
  expect(r.status).toBe(400);
  expect(fields(r)).toContain(path);
  expect(fake.embeddingRequests.length).toBe(before);
});

test('an unknown model is 404; the configured upstream name is accepted; no runtime:chat is 403', async () => {
  expect((await post({ input: 'a', model: 'text-embedding-nope' })).status).toBe(404);
  const byName = await post({ input: 'a', model: 'emb-upstream' });
  expect(byName.status).toBe(200);
  expect(byName.body.model).toBe('emb-upstream');
  const other = (await h.key(['runtime:models'])).apiKey;
  expect((await post({ input: 'a' }, other)).status).toBe(403);
});

test('provider failures: 429 keeps Retry-After, 5xx is 502, none configured is 503', async () => {
  for (const [status, expected] of [
    [429, 429],
    [500, 502],
  ] as const) {
    const failing = await startFakeOpenAI({ embeddings: { status } });
    const app = await startExtraApp(h, { config: { openai: { ...h.config.openai, baseUrl: failing.url } } });
    try {
      const res = await fetch(`${app.url}/v1/embeddings`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ input: Array.from({ length: 600 }, (_x, i) => `t${i}`) }),
      });
      expect(res.status).toBe(expected);
      if (status === 429) expect(res.headers.get('retry-after')).toBe('7');
      // Ten batches, four calls at a time: the first failure ends the request, no further batch is sent.
      expect(failing.embeddingRequests.length).toBeGreaterThanOrEqual(1);
      expect(failing.embeddingRequests.length).toBeLessThanOrEqual(4);
    } finally {
      await app.close();
      await failing.close();
    }
  }
  const none = await startExtraApp(h, { config: { openai: { ...h.config.openai, baseUrl: undefined } } });
  try {
    const res = await fetch(`${none.url}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'a' }),
    });
    expect(res.status).toBe(503);
  } finally {
    await none.close();
  }
});
