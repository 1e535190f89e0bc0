import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { freePort } from '../../workers/temporal-dev';
import { resetWhenIdle, startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai';
import { startHarness, type Harness } from '../helpers/harness';

let h: Harness;
let bare: Harness;
let a: FakeOpenAI;
let b: FakeOpenAI;
let key: string;
let client: OpenAI;

beforeAll(async () => {
  a = await startFakeOpenAI();
  b = await startFakeOpenAI();
  const deadPort = await freePort();
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'svc-faults-')), 'svc.yaml');
  writeFileSync(
    file,
    [
      'providers:',
      `  alpha: { base_url: "${a.url}" }`,
      `  beta: { base_url: "${b.url}" }`,
      `  slow: { base_url: "${a.url}", timeout_ms: 1500 }`,
      `  dead: { base_url: "http://127.0.0.1:${deadPort}/v1" }`,
      'lanes:',
      '  svc-oracle: { provider: alpha, model: primary-model, fallbacks: [beta/backup-model] }',
      '  mid: alpha',
      '  micro: slow',
      '  slm-fast: dead',
      'default_provider: alpha',
    ].join('\n'),
  );
  h = await startHarness({ env: { SVC_CONFIG: file } });
  bare = await startHarness();
  key = (await h.key(['runtime:chat'])).apiKey;
  client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
});
afterAll(async () => {
  await h?.close();
  await bare?.close();
  await a?.close();
  await b?.close();
});
beforeEach(() => resetWhenIdle(a, b));

const ask = (model: string, extra: Record<string, unknown> = {}) =>
  h.req('POST', '/v1/chat/completions', { key, body: { model, messages: [{ role: 'user', content: 'x' }], ...extra } });

/** The JSON chunks of an SSE chat answer (its `data: {...}` events). */
const chunksOf = (text: string): any[] =>
  text
    .split('\n\n')
    .filter((e) => e.startsWith('data: {'))
    .map((e) => JSON.parse(e.slice(6)));

describe('upstream faults and fallbacks through the API', () => {
  test('fallback to the next provider on 5xx (JSON) and on 429 (stream, before the first byte)', async () => {
    a.script({ status: 503 });
    b.script({ reply: 'backup answer' });
    const r = await ask('svc-oracle');
    expect(r.status).toBe(200);
    expect(r.body.choices[0].message.content).toBe('backup answer');
    expect(r.body.meta.provider).toBe('beta');
    expect(a.chats[0].body.model).toBe('primary-model');
    expect(b.chats[0].body.model).toBe('backup-model');
    expect(r.text).not.toMatch(/primary-model|backup-model/);

    a.script({ status: 429, retryAfter: '5' });
    b.script({ reply: 'streamed backup' });
    const stream = await client.chat.completions.create({
      model: 'svc-oracle',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    let text = '';
    let meta: any;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      meta = (c as any).meta ?? meta;
    }
    expect(text).toBe('streamed backup');
    expect(meta.provider).toBe('beta');
  });

  test('429 → 429 with Retry-After; 5xx → 502; refused → 502; all as ErrorResponse', async () => {
    a.script({ status: 429, retryAfter: '9' });
    const limited = await ask('mid');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('9');
    expect(limited.body).toMatchObject({ code: 'rate_limited', request_id: expect.any(String) });
    expect(limited.body.error).toMatch(/alpha.*retry after 9/);

    a.script({ status: 500 });
    const failed = await ask('mid');
    expect([failed.status, failed.body.code]).toEqual([502, 'upstream_error']);

    const refused = await ask('slm-fast');
    expect([refused.status, refused.body.code]).toEqual([502, 'upstream_error']);
    expect(refused.body.error).toMatch(/Could not reach the model provider 'dead'/);

    a.script({ status: 500 });
    await expect(
      client.chat.completions.create({ model: 'mid', messages: [{ role: 'user', content: 'x' }], stream: true }),
    ).rejects.toMatchObject({ status: 502 });
  });

  test('an answer with NUL or a lone surrogate reaches the client and its session as U+FFFD, JSON and stream', async () => {
    // PostgreSQL stores neither; the answer used to be lost: a 400 blaming the request, or a stream ending "internal".
    for (const stream of [false, true]) {
      const session = `odd-answer-${stream}`;
      a.script({ reply: 'nul\u0000here and half\ud800pair' });
      const r = await h.req('POST', '/v1/chat/completions', {
        key,
        headers: { 'X-Session-ID': session },
        body: { model: 'svc-oracle', messages: [{ role: 'user', content: 'x' }], stream },
      });
      expect(r.status).toBe(200);
      const content = stream
        ? chunksOf(r.text)
            .map((c) => c.choices[0]?.delta?.content ?? '')
            .join('')
        : r.body.choices[0].message.content;
      expect(content).toBe('nul\uFFFDhere and half\uFFFDpair');
      const stored = await h.req('GET', `/v1/sessions/${session}`, { key });
      expect(stored.body.messages.map((m: { content: string }) => m.content)).toEqual(['x', content]);
    }
  });

  test('an upstream asking for tool calls the route never offered: the client is told "stop", not calls that are not there', async () => {
    for (const stream of [false, true]) {
      a.script({ reply: 'partial', toolCalls: [{ name: 'lookup', arguments: { q: 1 } }] });
      const r = await h.req('POST', '/v1/chat/completions', {
        key,
        body: { model: 'svc-oracle', messages: [{ role: 'user', content: 'x' }], stream },
      });
      expect(r.status).toBe(200);
      const finish = stream
        ? chunksOf(r.text)
            .map((c) => c.choices[0]?.finish_reason)
            .filter(Boolean)
        : [r.body.choices[0].finish_reason];
      expect(finish).toEqual(['stop']);
      if (!stream) expect(r.body.choices[0].message.tool_calls).toBeUndefined();
    }
  });

  test('timeout → 504 (JSON and stream before the first byte)', async () => {
    a.script({ hang: true }, { hang: true });
    const t = await ask('micro');
    expect([t.status, t.body.code]).toEqual([504, 'upstream_timeout']);
    const s = await ask('micro', { stream: true });
    expect(s.status).toBe(504);
    await a.waitFor(() => a.inFlight === 0);
  });

  test('a failure mid-stream ends the stream with an error chunk and [DONE], never a hang', async () => {
    a.script({ reply: 'one two three four', dropAfterChunks: 2 });
    const raw = await ask('mid', { stream: true });
    expect(raw.status).toBe(200);
    const events = raw.text.trim().split('\n\n');
    expect(events[events.length - 1]).toBe('data: [DONE]');
    const err = JSON.parse(events[events.length - 2].slice(6));
    expect(err.error).toMatchObject({ code: 'upstream_error', status: 502 });
    expect(raw.text).toContain('"content":"one"');

    a.script({ reply: 'one two three', hangAfterChunks: 1 });
    const stream = await client.chat.completions.create({
      model: 'micro',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    let text = '';
    await expect(
      (async () => {
        for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
      })(),
    ).rejects.toThrow(/did not answer within 1500 ms/);
    expect(text).toBe('one');
  });

  test('no provider configured: the service runs; chat answers 503 saying how to configure one', async () => {
    const k = (await bare.key(['runtime:chat', 'runtime:models'])).apiKey;
    const r = await bare.req('POST', '/v1/chat/completions', {
      key: k,
      body: { messages: [{ role: 'user', content: 'x' }] },
    });
    expect(r.status).toBe(503);
    expect(r.body.code).toBe('service_unavailable');
    expect(r.body.error).toMatch(/OPENAI_BASE_URL.*SVC_CONFIG/);
    expect(r.headers.get('retry-after')).toBe('2'); // the chat route's fast path answers 503s like every route
    const models = await bare.req('GET', '/v1/models', { key: k });
    expect(models.status).toBe(200);
    expect(models.body.data.every((m: { available: boolean }) => !m.available)).toBe(true);
  });
});
