import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import pino from 'pino';
import { sql } from 'slonik';
import { fromDependencyError } from '../../api/middleware/errors';
import { closeServer, serveApi } from '../../workers/runtime';
import { startHarness, type Harness } from '../helpers/harness';

// Issue 10 items 5-8: each test sends exactly the malformed input the black-box fuzz found answered 500
// (or never answered), against the production server (`serveApi`) with small limits.

let h: Harness;
let key: string;
let server: http.Server;
let port: number;
let slowPage: http.Server;
let slowUrl: string;
const logs: Array<{ level: number; msg: string }> = [];

beforeAll(async () => {
  h = await startHarness();
  key = (await h.key(['runtime:chat'])).apiKey;
  const log = pino({ level: 'debug' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  const config = {
    ...h.config,
    port: 0,
    host: '127.0.0.1',
    allowPrivateFetch: true,
    http: { bodyTimeoutMs: 500, headersTimeoutMs: 500, maxConnectionsPerAddress: 4 },
  };
  server = await serveApi({ config, db: h.db, log, temporal: { connection: h.connection, client: h.client } });
  port = (server.address() as AddressInfo).port;
  // A page that answers after three body timeouts: the work after the body is not limited.
  slowPage = http.createServer((_req, res) => {
    setTimeout(
      () => res.writeHead(200, { 'content-type': 'text/plain' }).end('Slow but complete page about durable rivers.'),
      1500,
    );
  });
  await new Promise<void>((r) => slowPage.listen(0, '127.0.0.1', () => r()));
  slowUrl = `http://127.0.0.1:${(slowPage.address() as AddressInfo).port}/page.txt`;
});
afterAll(async () => {
  if (server) await closeServer(server);
  await new Promise((r) => slowPage?.close(r));
  await h?.close();
});

/** Opens a raw connection, writes `data` and resolves with everything read until the server closes it. */
function exchange(data: string | Buffer, socket = net.connect(port, '127.0.0.1')): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('close', () => resolve(text));
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? resolve(text) : reject(err)));
    socket.write(data);
  });
}

function parse(raw: string): { status: number; body: any } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1]);
  const at = raw.indexOf('\r\n\r\n');
  return { status, body: JSON.parse(raw.slice(at + 4)) };
}

const errorsLogged = () => logs.filter((l) => l.level >= 50);

describe('item 5: undecodable bodies', () => {
  test.each(['gzip', 'deflate', 'br'])(
    'Content-Encoding: %s with a body that is not %s → 400, not 500',
    async (encoding) => {
      const r = await h.req('POST', '/v1/tasks', {
        key,
        raw: 'this is not compressed',
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
      });
      expect([400, 415]).toContain(r.status);
      expect(typeof r.body.error).toBe('string');
      expect(r.body.code).toMatch(/invalid_request|invalid_json|unsupported_media_type/);
    },
  );

  test('a valid gzip body is accepted', async () => {
    const res = await fetch(`${h.url}/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ title: 'zipped' })),
    });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { title: string }).title).toBe('zipped');
  });

  test('an invalid chunked body is a JSON 400 and is not logged as an error', async () => {
    logs.length = 0;
    const raw = await exchange(
      `POST /v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"tit\r\nzz\r\nle":1}\r\n0\r\n\r\n`,
    );
    const r = parse(raw);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_request');
    expect(errorsLogged()).toEqual([]);
  });
});

describe('bodies refused before their end: the connection stays usable', () => {
  // One kept-alive connection: the second request goes on the socket the refused one used.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  afterAll(() => agent.destroy());
  function send(method: string, path: string, headers: Record<string, string>, body?: Buffer) {
    return new Promise<{ status: number; socket: number; body: string }>((resolve, reject) => {
      const req = http.request(
        `http://127.0.0.1:${port}${path}`,
        { method, agent, headers: { authorization: `Bearer ${key}`, ...headers } },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode!, socket: req.socket!.localPort!, body: text }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  test.each([
    ['a chunked JSON body past the limit', { 'transfer-encoding': 'chunked' }, (b: Buffer) => b],
    ['a gzip body that inflates past the limit', { 'content-encoding': 'gzip' }, (b: Buffer) => gzipSync(b)],
  ])('%s is 413 and the next request on that connection is answered', async (_name, headers, encode) => {
    const big = Buffer.concat([Buffer.from('{"title":"'), Buffer.alloc(3 * 1024 * 1024, 0x61), Buffer.from('"}')]);
    const refused = await send('POST', '/v1/tasks', { 'content-type': 'application/json', ...headers }, encode(big));
    expect([refused.status, JSON.parse(refused.body).code]).toEqual([413, 'payload_too_large']);
    // The parser stopped reading; the rest of the body held the connection until the server closed it (ECONNRESET).
    const next = await send('GET', '/v1/health', {});
    expect([next.status, next.socket]).toEqual([200, refused.socket]);
  });
});

describe('item 6: lone surrogates and NUL reach no jsonb column', () => {
  const lone = '\ud800';
  test.each([
    ['task metadata key', '/v1/tasks', { title: 't', metadata: { [`k${lone}`]: 'v' } }, /^body\.metadata\./],
    ['task metadata value', '/v1/tasks', { title: 't', metadata: { k: `v${lone}` } }, /^body\.metadata\.k$/],
    [
      'step args',
      '/v1/tasks',
      { title: 't', steps: [{ id: 'a', title: 'a', action: 'fetch', args: { url: `http://x/${lone}` } }] },
      /^body\.steps\.0\.args\.url$/,
    ],
    [
      'goal step prompt',
      '/v1/goals',
      { title: 'g', steps: [{ title: 's', prompt: `p${lone}` }] },
      /^body\.steps\.0\.prompt$/,
    ],
    [
      'sovereign step prompt',
      '/v1/sovereign/goals',
      { title: 'g', steps: [{ title: 's', prompt: `\udc00p` }] },
      /^body\.steps\.0\.prompt$/,
    ],
    [
      'swarm params',
      '/v1/swarm/run',
      { operation: 'map', params: { prompt: `x${lone}`, items: ['a'] } },
      /^body\.params\.prompt$/,
    ],
  ])('%s → 400 naming the field', async (_what, path, body, field) => {
    const r = await h.req('POST', path, { key, body });
    expect(r.status).toBe(400);
    expect(r.body.details.map((d: { path: string }) => d.path)).toEqual([expect.stringMatching(field)]);
    expect(r.body.details[0].message).toMatch(/surrogate/);
  });

  test('entity event metadata with a lone surrogate → 400; nothing stored', async () => {
    const entity = await h.req('POST', '/v1/entities', { key, body: { name: 'Acme' } });
    const r = await h.req('POST', `/v1/entities/${entity.body.id}/events`, {
      key,
      body: { kind: 'note', metadata: { source: `a${lone}` } },
    });
    expect(r.status).toBe(400);
    expect(r.body.details[0].path).toBe('body.metadata.source');
    expect((await h.req('GET', `/v1/entities/${entity.body.id}`, { key })).body.events).toEqual([]);
  });

  test('a body nested deeper than 64 levels is 400 naming where (it was 500: stack overflow after parsing)', async () => {
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    const cases: Array<[string, string, string]> = [
      [
        '/v1/chat/completions',
        `{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{"a":${deep(20_000)}}}}}`,
        'body.response_format.json_schema.schema.a.0.0',
      ],
      [
        '/v1/tools/plan',
        `{"goal":"g","steps":[{"id":"a","tool":"calculator","args":{"expression":${deep(5_000)}}}]}`,
        'body.steps.0.args.expression.0.0',
      ],
    ];
    for (const [route, raw, at] of cases) {
      const r = await h.req('POST', route, { key, raw, headers: { 'content-type': 'application/json' } });
      expect(r.status).toBe(400);
      expect(r.body.details).toEqual([
        {
          path: expect.stringMatching(new RegExp(`^${at.replaceAll('.', '\\.')}`)),
          message: 'must not nest more than 64 levels deep',
        },
      ]);
    }
    // 64 levels are fine (the body is one of them).
    const ok = `{"goal":"g","steps":[{"id":"a","tool":"calculator","args":{"expression":"1+1","x":${deep(60)}}}]}`;
    const fine = await h.req('POST', '/v1/tools/plan', {
      key,
      raw: ok,
      headers: { 'content-type': 'application/json' },
    });
    expect([fine.status, fine.body.steps?.[0]?.tool]).toEqual([201, 'calculator']);
  });

  test('a well-formed astral character (a surrogate pair) is stored unchanged', async () => {
    const r = await h.req('POST', '/v1/tasks', { key, body: { title: 't', metadata: { mood: 'ok 🎉' } } });
    expect(r.status).toBe(201);
    expect((await h.req('GET', `/v1/tasks/${r.body.id}`, { key })).body.metadata).toEqual({ mood: 'ok 🎉' });
  });

  test('NUL in a multipart filename → 400 naming it', async () => {
    const form = new FormData();
    form.append('file', new Blob(['plain text'], { type: 'text/plain' }), 'no\u0000te.txt');
    const res = await fetch(`${h.url}/v1/documents/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    const body = (await res.json()) as { details: Array<{ path: string }> };
    expect(res.status).toBe(400);
    expect(body.details[0].path).toBe('body.file.filename');
  });

  test('safety net: every PostgreSQL data exception the database raises maps to 400', async () => {
    const refused = async (query: ReturnType<typeof sql.unsafe>) => {
      try {
        await h.db.query(query);
      } catch (err) {
        return fromDependencyError(err);
      }
      throw new Error('the database accepted it');
    };
    for (const q of [
      sql.unsafe`SELECT '"\\ud800"'::jsonb`,
      sql.unsafe`SELECT 'x'::int`,
      sql.unsafe`SELECT '1e400'::float8`,
      sql.unsafe`SELECT '2026-13-45'::date`,
    ]) {
      const err = await refused(q);
      expect({ status: err?.status, code: err?.code }).toEqual({ status: 400, code: 'invalid_request' });
    }
    expect(await refused(sql.unsafe`SELECT 1/0`)).toBeNull(); // a server bug stays 500
  });
});

describe('item 7: slow bodies and connection caps (production server)', () => {
  test('a body that never finishes gets 408 and the connection closes', async () => {
    const raw = await exchange(
      `POST /v1/waitlist HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"email":`,
    );
    const r = parse(raw);
    expect(r.status).toBe(408);
    expect(r.body.code).toBe('request_timeout');
  });

  test('headers that never finish get a JSON 408', async () => {
    const r = parse(await exchange('GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: '));
    expect([r.status, r.body.code]).toEqual([408, 'request_timeout']);
  });

  test('work after the body arrived is not cut by the body timeout', async () => {
    const body = JSON.stringify({ url: slowUrl });
    const raw = await exchange(
      `POST /v1/ingest/web HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(parse(raw).status).toBe(201);
  });

  test('connections beyond the per-address cap get 429; closing one frees a slot', async () => {
    const open: net.Socket[] = [];
    const health = 'GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n';
    const firstResponse = (s: net.Socket) =>
      new Promise<string>((resolve) => s.once('data', (d) => resolve(d.toString())));
    try {
      for (let i = 0; i < 4; i++) {
        const s = net.connect(port, '127.0.0.1');
        open.push(s);
        s.write(health);
        expect(await firstResponse(s)).toMatch(/^HTTP\/1\.1 200/);
      }
      const refused = parse(await exchange(health));
      expect([refused.status, refused.body.code]).toEqual([429, 'rate_limited']);
      const closed = new Promise((r) => open[0].once('close', r));
      open[0].destroy();
      await closed;
      // The server sees the close a moment later; retry until the slot is free (bounded).
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        status = parse(await exchange(`GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 20));
      }
      expect(status).toBe(200);
    } finally {
      for (const s of open) s.destroy();
    }
  });
});

describe('item 8: parser-level errors answer with the JSON error body', () => {
  test('bad bytes in the URL → 400 JSON', async () => {
    const r = parse(await exchange(Buffer.from('GET /v1/hea\x01lth HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1')));
    expect([r.status, r.body.code]).toEqual([400, 'invalid_request']);
  });

  test('oversize headers → 431 JSON', async () => {
    const r = parse(await exchange(`GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
    expect([r.status, r.body.code]).toEqual([431, 'header_too_large']);
  });

  test('a bad chunk size → 400 JSON', async () => {
    const r = parse(
      await exchange(
        'POST /v1/waitlist HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nnothex\r\n',
      ),
    );
    expect([r.status, r.body.code]).toEqual([400, 'invalid_request']);
  });
});
