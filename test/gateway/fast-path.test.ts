import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { setLimits } from '../../activities/store/rate-limits';
import { FastContext } from '../../api/fast-path';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { startExtraApp, type ExtraApp } from '../helpers/extra-app';

// The harness app answers the model routes on the fast path (the default); `koa` is the same app
// with SVC_HTTP_FAST_PATH off, on the same database and upstream. The same request to both must
// get the same answer: status line, every header in order (Date aside), body (ids and times aside).

let fake: FakeOpenAI;
let h: Harness;
let koa: ExtraApp;
withFakeUpstream(
  {
    scopes: ['runtime:chat'],
    worker: true,
    resetEach: { reply: 'The quick brown fox', usage: { prompt_tokens: 9, completion_tokens: 4 } },
  },
  (up) => ({ fake, h } = up),
);
beforeAll(async () => {
  koa = await startExtraApp(h, { config: { http: { ...h.config.http, fastPath: false } } });
});
afterAll(async () => koa?.close());

const agent = new http.Agent({ keepAlive: true });
afterAll(() => agent.destroy());

interface Raw {
  status: string;
  headers: string[];
  body: string;
}

/** One request with exactly these headers and body bytes; the answer as it came (raw header list). */
function send(
  base: string,
  o: { method?: string; path?: string; headers: Record<string, string>; body?: Buffer | string; chunked?: boolean },
): Promise<Raw> {
  const url = new URL(o.path ?? '/v1/chat/completions', base);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: o.method ?? 'POST', headers: o.headers, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: `${res.statusCode} ${res.statusMessage}`, headers: res.rawHeaders, body }));
    });
    req.on('error', reject);
    if (o.chunked && o.body !== undefined) {
      // Two writes without a Content-Length: Transfer-Encoding: chunked.
      const b = Buffer.from(o.body);
      req.write(b.subarray(0, 5));
      req.end(b.subarray(5));
    } else req.end(o.body);
  });
}

/** Headers without Date; the values that depend on the moment (ids, reset times) replaced. */
function normal(r: Raw): Raw {
  const headers: string[] = [];
  for (let i = 0; i < r.headers.length; i += 2) {
    const name = r.headers[i];
    if (name.toLowerCase() === 'date') continue;
    let value = r.headers[i + 1];
    if (/^x-ratelimit-reset-|^retry-after$/i.test(name)) value = '<time>';
    if (/^content-length$/i.test(name)) value = '<length>';
    headers.push(name, value);
  }
  const body = r.body
    .replace(/chatcmpl-[0-9a-z]+/g, 'chatcmpl-<id>')
    .replace(/"created":\d+/g, '"created":0')
    .replace(/Retry after \d+ s/g, 'Retry after <n> s');
  return { status: r.status, headers, body };
}

const json = (body: unknown) => JSON.stringify(body);
const chatBody = (extra: Record<string, unknown> = {}) =>
  json({ model: 'svc-oracle', messages: [{ role: 'user', content: 'Say the pangram.' }], ...extra });

/** Sends the same request to the fast-path app and to the Koa-only app; expects the fast path to have answered the first. */
async function both(
  o: { path?: string; headers: Record<string, string>; body?: string },
  keys: { fast: string; koa: string },
): Promise<[Raw, Raw]> {
  const spy = jest.spyOn(FastContext.prototype, 'respond');
  try {
    const withKey = (k: string) => (k ? { ...o.headers, authorization: `Bearer ${k}` } : o.headers);
    const fastRaw = await send(h.url, { ...o, headers: withKey(keys.fast) });
    expect(spy).toHaveBeenCalledTimes(1);
    const koaRaw = await send(koa.url, { ...o, headers: withKey(keys.koa) });
    expect(spy).toHaveBeenCalledTimes(1);
    return [normal(fastRaw), normal(koaRaw)];
  } finally {
    spy.mockRestore();
  }
}

const plain = (id: string, extra: Record<string, string> = {}) => ({
  'content-type': 'application/json',
  'x-request-id': id,
  'x-svc-context': 'dev',
  ...extra,
});

test('the fast path answers what Koa answers: JSON and streamed chats, every failure, rate-limit headers', async () => {
  const a = await h.key(['runtime:chat']);
  const b = await h.key(['runtime:chat']);
  const keys = { fast: a.apiKey, koa: b.apiKey };
  const cases: Array<{ name: string; headers: Record<string, string>; body: string; keys?: typeof keys }> = [
    { name: 'json', headers: plain('req-json'), body: chatBody() },
    { name: 'stream', headers: plain('req-stream'), body: chatBody({ stream: true }) },
    {
      name: 'stream with usage',
      headers: plain('req-usage'),
      body: chatBody({ stream: true, stream_options: { include_usage: true } }),
    },
    {
      name: 'utility lane',
      headers: plain('req-lane'),
      body: json({ model: 'micro', messages: [{ role: 'user', content: 'hi' }] }),
    },
    { name: 'invalid body', headers: plain('req-400'), body: json({ model: 'svc-oracle', messages: [] }) },
    { name: 'invalid JSON', headers: plain('req-json-400'), body: '{"model": ' },
    { name: 'unknown model', headers: plain('req-404'), body: chatBody({ model: 'gpt-5' }) },
    { name: 'bad header', headers: plain('req-hdr', { 'x-session-id': 'no spaces allowed' }), body: chatBody() },
    { name: 'no key', headers: plain('req-401'), body: chatBody(), keys: { fast: '', koa: '' } },
    {
      name: 'bad key',
      headers: plain('req-401b'),
      body: chatBody(),
      keys: { fast: 'svc.nope.nope', koa: 'svc.nope.nope' },
    },
  ];
  for (const c of cases) {
    const [f, k] = await both({ headers: c.headers, body: c.body }, c.keys ?? keys);
    expect({ case: c.name, ...f }).toEqual({ case: c.name, ...k });
  }
  // Client tools: the model's calls answered the same way on both paths, as JSON and as a stream.
  // (Usage given: an estimate from the prompt would differ when a new minute changes the prompt's time line.)
  fake.setDefault({
    toolCalls: [{ id: 'call_1', name: 'lookup', arguments: { q: 'pangram' } }],
    usage: { prompt_tokens: 9, completion_tokens: 3 },
  });
  const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
  for (const stream of [false, true]) {
    const [f, k] = await both({ headers: plain(`req-tools-${stream}`), body: chatBody({ tools, stream }) }, keys);
    expect(f.body).toContain('"tool_calls":[{"');
    expect({ case: `tools, stream ${stream}`, ...f }).toEqual({ case: `tools, stream ${stream}`, ...k });
  }
  fake.setDefault({ reply: 'ok' });
  // A key without the scope: 403 naming it.
  const s1 = await h.key(['runtime:models']);
  const s2 = await h.key(['runtime:models']);
  const [f403, k403] = await both({ headers: plain('req-403'), body: chatBody() }, { fast: s1.apiKey, koa: s2.apiKey });
  expect(f403.status).toBe('403 Forbidden');
  expect(f403).toEqual(k403);
  // Upstream failure: 502 with the same body.
  fake.setDefault({ status: 500 });
  const [f502, k502] = await both({ headers: plain('req-502'), body: chatBody() }, keys);
  expect(f502.status).toBe('502 Bad Gateway');
  expect(f502).toEqual(k502);
  // Usage given, not estimated from the prompt's length: the two requests' prompts carry the current
  // time, which can differ between them (a new minute; before, milliseconds written or not).
  fake.setDefault({ reply: 'ok', usage: { prompt_tokens: 9, completion_tokens: 1 } });
  // Rate limits: one request a minute on each key; the answers carry the x-ratelimit-* headers, then 429.
  const l1 = await h.key(['runtime:chat']);
  const l2 = await h.key(['runtime:chat']);
  await setLimits(h.db, l1.tenantId, l1.keyId, { requests_per_minute: 1 });
  await setLimits(h.db, l2.tenantId, l2.keyId, { requests_per_minute: 1 });
  const limited = { fast: l1.apiKey, koa: l2.apiKey };
  const [fOk, kOk] = await both({ headers: plain('req-rl1'), body: chatBody() }, limited);
  expect(fOk.headers).toContain('x-ratelimit-limit-requests');
  expect(fOk).toEqual(kOk);
  const [f429, k429] = await both({ headers: plain('req-rl2'), body: chatBody() }, limited);
  expect(f429.status).toBe('429 Too Many Requests');
  expect(f429).toEqual(k429);
});

test('responses (JSON and stream) and embeddings: the fast path answers what Koa answers', async () => {
  const a = await h.key(['runtime:chat']);
  const b = await h.key(['runtime:chat']);
  const keys = { fast: a.apiKey, koa: b.apiKey };
  fake.setDefault({ reply: 'ok', usage: { prompt_tokens: 9, completion_tokens: 1 } });
  // Ids and times differ between any two answers: replaced before comparing.
  const same = (r: Raw): Raw => ({
    ...r,
    body: r.body.replace(/\b(resp|msg|fc)_[0-9a-z]+/g, '$1_<id>').replace(/"(created_at|completed_at)":\d+/g, '"$1":0'),
  });
  const cases = [
    { name: 'response', path: '/v1/responses', body: json({ input: 'Say the pangram.' }) },
    { name: 'response stream', path: '/v1/responses', body: json({ input: 'Say the pangram.', stream: true }) },
    { name: 'response refused', path: '/v1/responses', body: json({ input: 'x', background: true, store: false }) },
    { name: 'background response', path: '/v1/responses', body: json({ input: 'Say it.', background: true }) },
    { name: 'embeddings', path: '/v1/embeddings', body: json({ input: ['one', 'two'] }) },
    { name: 'embeddings base64', path: '/v1/embeddings', body: json({ input: 'one', encoding_format: 'base64' }) },
  ];
  for (const c of cases) {
    const [f, k] = await both({ path: c.path, headers: plain(`req-${c.name.replace(/ /g, '-')}`), body: c.body }, keys);
    expect({ case: c.name, ...same(f) }).toEqual({ case: c.name, ...same(k) });
  }
  // A background response streamed from its stored events (SSE ids are row ids; the text's deltas are split as the
  // worker's flushes fall): the same status and headers, the same events by type up to the text, the same text.
  const body = json({ input: 'Say it.', background: true, stream: true });
  const [f, k] = await both({ path: '/v1/responses', headers: plain('req-bg-stream'), body }, keys);
  const read = (r: Raw) => {
    const events = r.body
      .split('\n\n')
      .filter((b) => b.includes('data: '))
      .map((b) => JSON.parse(/^data: (.*)$/m.exec(b)![1]) as { type: string; delta?: string });
    return {
      status: r.status,
      headers: r.headers,
      types: [...new Set(events.map((e) => e.type))],
      text: events.map((e) => e.delta ?? '').join(''),
    };
  };
  expect(read(f)).toEqual(read(k));
  expect(read(f)).toMatchObject({ status: '200 OK', text: 'ok' });
  expect(read(f).types.at(-1)).toBe('response.completed');
  expect(f.headers).toContain('text/event-stream; charset=utf-8');
});

test('requests the fast path does not take go to Koa unchanged', async () => {
  const { apiKey } = await h.key(['runtime:chat']);
  const auth = { authorization: `Bearer ${apiKey}` };
  const spy = jest.spyOn(FastContext.prototype, 'respond');
  try {
    const ok = (r: Raw) => expect({ status: r.status, body: r.body }).toMatchObject({ status: '200 OK' });
    // A query string, a chunked body, a JSON media type other than application/json, a compressed body.
    ok(await send(h.url, { path: '/v1/chat/completions?x=1', headers: { ...plain('q'), ...auth }, body: chatBody() }));
    ok(await send(h.url, { headers: { ...plain('c'), ...auth }, body: chatBody(), chunked: true }));
    ok(
      await send(h.url, {
        headers: { ...plain('t'), ...auth, 'content-type': 'application/vnd.api+json' },
        body: chatBody(),
      }),
    );
    ok(
      await send(h.url, {
        headers: { ...plain('z'), ...auth, 'content-encoding': 'gzip' },
        body: gzipSync(chatBody()),
      }),
    );
    // Other methods and spellings of the path keep the router's answers.
    const put = await send(h.url, { method: 'PUT', headers: auth });
    expect(put.status).toBe('405 Method Not Allowed');
    // GET is the stored completions' list (Koa's route).
    const get = await send(h.url, { method: 'GET', headers: auth });
    expect([get.status, JSON.parse(get.body).object]).toEqual(['200 OK', 'list']);
    const slash = await send(h.url, {
      path: '/v1/chat/completions/',
      headers: { ...plain('s'), ...auth },
      body: chatBody(),
    });
    expect(slash.status).toBe('200 OK');
    // A body over the limit (the model routes': SVC_CHAT_BODY_LIMIT) is refused by koa-body as before.
    const big = await send(h.url, {
      headers: { ...plain('b'), ...auth },
      body: chatBody({ user: 'x'.repeat(h.config.chatBodyLimit) }),
    });
    expect(big.status).toBe('413 Payload Too Large');
    expect(spy).not.toHaveBeenCalled();
    // The same request without any of that takes the fast path.
    ok(await send(h.url, { headers: { ...plain('f'), ...auth }, body: chatBody() }));
    expect(spy).toHaveBeenCalledTimes(1);
  } finally {
    spy.mockRestore();
  }
});

test('a conversation past SVC_BODY_LIMIT but within SVC_CHAT_BODY_LIMIT is answered on both paths; other routes keep the smaller limit', async () => {
  const a = await h.key(['runtime:chat', 'runtime:tasks']);
  const b = await h.key(['runtime:chat']);
  // Three turns of 1 MB each (a coding agent resending files): 3 MB, over the 1 MB JSON limit of other routes.
  const turn = 'lorem ipsum '.repeat(Math.ceil(1_000_000 / 12)).slice(0, 1_000_000);
  const body = chatBody({
    messages: [
      { role: 'user', content: turn },
      { role: 'assistant', content: turn },
      { role: 'user', content: turn },
    ],
  });
  expect(body.length).toBeGreaterThan(h.config.bodyLimit * 2);
  const [f, k] = await both({ headers: plain('req-big'), body }, { fast: a.apiKey, koa: b.apiKey });
  expect(f.status).toBe('200 OK');
  expect(f).toEqual(k);
  expect(fake.chats.at(-1)!.body.messages.at(-1).content).toBe(turn);
  const task = await send(h.url, {
    path: '/v1/tasks',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${a.apiKey}` },
    body: JSON.stringify({ title: 'big', description: turn.repeat(2) }),
  });
  expect(task.status).toBe('413 Payload Too Large');
  // Past the chat limit itself: 413 on both paths.
  const small = await startExtraApp(h, { config: { chatBodyLimit: 2 * 1024 * 1024 } });
  try {
    const r = await send(small.url, {
      headers: { ...plain('req-too-big'), authorization: `Bearer ${a.apiKey}` },
      body,
    });
    expect(r.status).toBe('413 Payload Too Large');
    expect(JSON.parse(r.body).code).toBe('payload_too_large');
  } finally {
    await small.close();
  }
});
