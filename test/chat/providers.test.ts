import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { createModelRouter } from '../../activities/providers';
import type { ModelStreamChunk } from '../../activities/providers/types';
import { parseConfig } from '../../schema/config';
import { AppError } from '../../schema/errors';
import { freePort } from '../../workers/temporal-dev';
import { resetWhenIdle, startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai';

let a: FakeOpenAI;
let b: FakeOpenAI;
let deadPort: number;
const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-providers-'));

function writeConfig(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

function router(env: Record<string, string>) {
  return createModelRouter(parseConfig(env), { localUrl: null });
}

async function caught(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

async function collect(it: AsyncIterable<ModelStreamChunk>): Promise<ModelStreamChunk[]> {
  const out: ModelStreamChunk[] = [];
  for await (const c of it) out.push(c);
  return out;
}

beforeAll(async () => {
  a = await startFakeOpenAI();
  b = await startFakeOpenAI({ models: ['llama3.2:1b', 'qwen2.5-coder:1.5b'] });
  deadPort = await freePort();
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});
beforeEach(async () => {
  await resetWhenIdle(a, b);
  a.setDefault({});
  b.setDefault({});
});

describe('model router over a real OpenAI-compatible upstream', () => {
  test('complete: content, usage, public provider name; the key and upstream model go upstream only', async () => {
    a.script({ reply: 'Forty-two.', usage: { prompt_tokens: 11, completion_tokens: 3 } });
    const r = router({ OPENAI_BASE_URL: a.url, OPENAI_API_KEY: 'sk-test' });
    const res = await r.complete({ lane: 'svc-oracle', messages: [{ role: 'user', content: 'hi' }], temperature: 0.2 });
    expect(res).toEqual({
      content: 'Forty-two.',
      finish_reason: 'stop',
      usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 },
      provider: 'default',
    });
    expect(a.chats).toHaveLength(1);
    expect(a.chats[0].headers.authorization).toBe('Bearer sk-test');
    expect(a.chats[0].body).toMatchObject({
      model: 'gpt-4o',
      stream: false,
      temperature: 0.2,
      messages: [{ role: 'user', content: 'hi' }],
    });
  });

  test('stream: deltas in order, a final chunk with finish_reason and usage, provider resolved', async () => {
    a.script({ reply: 'one two three four' });
    const r = router({ OPENAI_BASE_URL: a.url });
    const s = r.stream({ lane: 'mid', messages: [{ role: 'user', content: 'count' }] });
    const chunks = await collect(s);
    expect(await s.provider).toBe('default');
    expect(chunks.map((c) => c.delta).join('')).toBe('one two three four');
    expect(chunks.filter((c) => c.delta).length).toBe(4);
    const last = chunks[chunks.length - 1];
    expect(last.finish_reason).toBe('stop');
    expect(last.usage?.completion_tokens).toBe(4);
    expect(a.chats[0].body).toMatchObject({
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  test('YAML config: lanes map to providers and models; fallback to the next provider on 5xx', async () => {
    const file = writeConfig(
      'two.yaml',
      `providers:\n  alpha: { base_url: "${a.url}", api_key: ka }\n  beta: { base_url: "${b.url}", model: beta-default }\n` +
        `lanes:\n  mid: { provider: alpha, model: m-alpha, fallbacks: [beta/org/m-beta] }\n  slm-code: beta\ndefault_provider: alpha\n`,
    );
    const r = router({ SVC_CONFIG: file });
    a.script({ status: 503 });
    b.script({ reply: 'from beta' });
    const res = await r.complete({ lane: 'mid', messages: [{ role: 'user', content: 'x' }] });
    expect(res.provider).toBe('beta');
    expect(res.content).toBe('from beta');
    expect(a.chats[0].body.model).toBe('m-alpha');
    expect(b.chats[0].body.model).toBe('org/m-beta');
    await r.complete({ lane: 'slm-code', messages: [{ role: 'user', content: 'x' }] });
    expect(b.chats[1].body.model).toBe('beta-default');
    expect(r.lanes().find((l) => l.id === 'svc-oracle')).toEqual({
      id: 'svc-oracle',
      provider: 'alpha',
      available: true,
    });
  });

  test('JSON config; nano follows micro; stream falls back on 429 and connection refused', async () => {
    const file = writeConfig(
      'lanes.json',
      JSON.stringify({
        providers: {
          dead: { base_url: `http://127.0.0.1:${deadPort}/v1` },
          alpha: { base_url: a.url },
          beta: { base_url: b.url },
        },
        lanes: { micro: ['dead/x', 'alpha/y', 'beta/z'] },
      }),
    );
    const r = router({ SVC_CONFIG: file });
    a.script({ status: 429, retryAfter: '3' });
    b.script({ reply: 'fallback stream' });
    const s = r.stream({ lane: 'nano', messages: [{ role: 'user', content: 'x' }] });
    const chunks = await collect(s);
    expect(await s.provider).toBe('beta');
    expect(chunks.map((c) => c.delta).join('')).toBe('fallback stream');
    expect(a.chats).toHaveLength(1);
  });

  test('429 maps to rate_limited with Retry-After; 500 and refused connections to upstream_error 502', async () => {
    const r = router({ OPENAI_BASE_URL: a.url });
    a.script({ status: 429, retryAfter: '7' });
    const e429 = await caught(r.complete({ lane: 'mid', messages: [{ role: 'user', content: 'x' }] }));
    expect([e429.code, e429.status, e429.headers?.['Retry-After']]).toEqual(['rate_limited', 429, '7']);
    a.script({ status: 500 });
    const e500 = await caught(r.complete({ lane: 'mid', messages: [{ role: 'user', content: 'x' }] }));
    expect([e500.code, e500.status]).toEqual(['upstream_error', 502]);
    expect(e500.message).toMatch(/default.*HTTP 500/);
    const dead = router({ OPENAI_BASE_URL: `http://127.0.0.1:${deadPort}/v1` });
    const eRefused = await caught(dead.complete({ lane: 'mid', messages: [{ role: 'user', content: 'x' }] }));
    expect([eRefused.code, eRefused.status]).toEqual(['upstream_error', 502]);
    expect(eRefused.message).toMatch(/ECONNREFUSED/);
    const sRefused = await caught(collect(dead.stream({ lane: 'mid', messages: [{ role: 'user', content: 'x' }] })));
    expect(sRefused.status).toBe(502);
  });

  test('timeout → upstream_timeout 504 and the upstream request is closed', async () => {
    const r = router({ OPENAI_BASE_URL: a.url });
    a.script({ hang: true });
    const e = await caught(r.complete({ lane: 'mid', messages: [{ role: 'user', content: 'x' }], timeoutMs: 250 }));
    expect([e.code, e.status]).toEqual(['upstream_timeout', 504]);
    // Cut off by the request's own limit (the upstream never answers, so nothing else could end it).
    expect(e.message).toMatch(/did not answer within 250 ms/);
    await a.waitFor(() => a.chats[0]?.closedEarly === true);
    expect(a.inFlight).toBe(0);
  });

  test('a stream that stalls mid-answer ends with upstream_timeout (provider timeout_ms as idle limit)', async () => {
    const file = writeConfig('slow.yaml', `providers:\n  slow: { base_url: "${a.url}", timeout_ms: 1000 }\n`);
    const r = router({ SVC_CONFIG: file });
    a.script({ reply: 'a b c d', hangAfterChunks: 2 });
    const got: string[] = [];
    const e = await caught(
      (async () => {
        for await (const c of r.stream({ lane: 'mid', messages: [{ role: 'user', content: 'x' }] })) got.push(c.delta);
      })(),
    );
    expect(got.join('')).toBe('a b');
    expect(e.code).toBe('upstream_timeout');
  });

  test('a dropped connection mid-stream ends with upstream_error, never a hang', async () => {
    const r = router({ OPENAI_BASE_URL: a.url });
    a.script({ reply: 'a b c d', dropAfterChunks: 1 });
    const got: string[] = [];
    const e = await caught(
      (async () => {
        for await (const c of r.stream({ lane: 'mid', messages: [{ role: 'user', content: 'x' }] })) got.push(c.delta);
      })(),
    );
    expect(got.join('')).toBe('a');
    expect(e.code).toBe('upstream_error');
  });

  test('abort signal and an early stream exit both close the upstream request', async () => {
    const r = router({ OPENAI_BASE_URL: a.url });
    a.script({ hang: true });
    const ctl = new AbortController();
    const p = r.complete({ lane: 'mid', messages: [{ role: 'user', content: 'x' }], signal: ctl.signal });
    await a.waitFor(() => a.chats.length === 1);
    ctl.abort(new Error('client went away'));
    await expect(p).rejects.toThrow('client went away');
    await a.waitFor(() => a.chats[0].closedEarly);

    a.script({ reply: 'w1 w2 w3 w4 w5 w6', chunkDelayMs: 50 });
    for await (const c of r.stream({ lane: 'mid', messages: [{ role: 'user', content: 'x' }] })) {
      if (c.delta) break;
    }
    await a.waitFor(() => a.chats[1].closedEarly);
    expect(a.inFlight).toBe(0);
  });

  test('tool calls come back assembled, in both modes', async () => {
    const r = router({ OPENAI_BASE_URL: a.url });
    const calls = [
      { name: 'calculator', arguments: { expression: '2+2' } },
      { name: 'datetime', arguments: {} },
    ];
    a.script({ toolCalls: calls }, { toolCalls: calls });
    const res = await r.complete({
      lane: 'slm-fast',
      messages: [{ role: 'user', content: 'x' }],
      tools: [{ type: 'function', function: { name: 'calculator' } }],
    });
    expect(res.finish_reason).toBe('tool_calls');
    expect(res.tool_calls?.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ['calculator', { expression: '2+2' }],
      ['datetime', {}],
    ]);
    expect(a.chats[0].body.tools).toHaveLength(1);
    const chunks = await collect(r.stream({ lane: 'slm-fast', messages: [{ role: 'user', content: 'x' }] }));
    expect(chunks[chunks.length - 1].tool_calls?.map((c) => c.function.name)).toEqual(['calculator', 'datetime']);
  });

  test('no provider: 503 saying how to configure one; unknown lane: model_not_found 404', async () => {
    const r = router({});
    expect(r.lanes().every((l) => !l.available && l.provider === null)).toBe(true);
    const e = await caught(r.complete({ lane: 'svc-oracle', messages: [{ role: 'user', content: 'x' }] }));
    expect([e.code, e.status]).toEqual(['service_unavailable', 503]);
    expect(e.message).toMatch(/OPENAI_BASE_URL.*SVC_CONFIG/);
    const unknown = await caught(r.complete({ lane: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }));
    expect([unknown.code, unknown.status]).toEqual(['model_not_found', 404]);
    expect(r.hasLane('gpt-4o')).toBe(false);
    expect(r.hasLane('slm-reason')).toBe(true);
    const down = createModelRouter(parseConfig({}), { localUrl: `http://127.0.0.1:${deadPort}` });
    expect((await caught(down.complete({ lane: 'mid', messages: [{ role: 'user', content: 'x' }] }))).status).toBe(503);
  });

  test('nothing configured but a local Ollama answers: it is used, with a fitting installed model', async () => {
    const r = createModelRouter(parseConfig({}), { localUrl: b.url.replace(/\/v1$/, '') });
    const res = await r.complete({ lane: 'slm-code', messages: [{ role: 'user', content: 'x' }] });
    expect(res.provider).toBe('ollama');
    expect(b.chats[0].body.model).toBe('qwen2.5-coder:1.5b');
    await r.complete({ lane: 'svc-oracle', messages: [{ role: 'user', content: 'x' }] });
    expect(b.chats[1].body.model).toBe('llama3.2:1b');
    expect(r.lanes()[0]).toEqual({ id: 'svc-oracle', provider: 'ollama', available: true });
  });

  test('an invalid config file does not throw at start; calls answer 503 without server paths, the problem goes to the log', async () => {
    const file = writeConfig('bad.yaml', 'lanes:\n  mid: nowhere\n');
    const logged: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => logged.push(line) });
    const r = createModelRouter(parseConfig({ SVC_CONFIG: file }), { localUrl: null, log });
    const e = await caught(r.complete({ lane: 'mid', messages: [{ role: 'user', content: 'x' }] }));
    expect(e.status).toBe(503);
    expect(e.message).toBe('The provider configuration is invalid; see the service log.');
    expect(e.message).not.toContain(dir);
    expect(r.configError).toMatch(/unknown provider 'nowhere'/);
    // Logged at start-up and on the refused call, with the detail.
    expect(logged.filter((l) => l.includes("unknown provider 'nowhere'")).length).toBeGreaterThanOrEqual(2);
    const missing = path.join(dir, 'missing.yaml');
    const r2 = router({ SVC_CONFIG: missing });
    const e2 = await caught(r2.complete({ lane: 'mid', messages: [{ role: 'user', content: 'x' }] }));
    expect([e2.status, e2.message.includes(missing)]).toEqual([503, false]);
    expect(r2.configError).toMatch(/cannot read/);
  });

  test('the fake tracks concurrency and echoes the prompt', async () => {
    const r = router({ OPENAI_BASE_URL: a.url });
    a.setDefault({ delayMs: 150, echo: true });
    const results = await Promise.all(
      [1, 2, 3].map((i) =>
        r.complete({
          lane: 'micro',
          messages: [
            { role: 'system', content: 'S' },
            { role: 'user', content: `q${i}` },
          ],
        }),
      ),
    );
    expect(a.maxInFlight).toBe(3);
    expect(a.inFlight).toBe(0);
    expect(results.map((x) => x.content).sort()).toEqual([
      'system: S\nuser: q1',
      'system: S\nuser: q2',
      'system: S\nuser: q3',
    ]);
  });
});
