import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { fetchWeb } from '../../activities/knowledge/web-fetch';
import { startHarness, type Harness } from '../helpers/harness';

const ARTICLE = `<!doctype html><html><head><title>Field guide: alpine marmots</title></head><body>
<nav><a href="/">Home</a> <a href="/shop">Shop</a> Subscribe now</nav>
<article><h1>Alpine marmots</h1>
<p>Alpine marmots hibernate for up to nine months, huddled together in burrows lined with dry grass.</p>
<p>Sentinels whistle sharply when eagles circle overhead, and the whole colony dives underground within seconds.</p>
<p>Pups leave the burrow for the first time in early July, about forty days after birth.</p></article>
<aside>Advertisement: buy hiking boots</aside><script>track()</script></body></html>`;

let h: Harness;
let key: string;
let base: string;
let server: http.Server;
const LIMIT = 64 * 1024;
beforeAll(async () => {
  h = await startHarness({ env: { SVC_ALLOW_PRIVATE_FETCH: 'true', SVC_UPLOAD_LIMIT: String(LIMIT) } });
  key = (await h.key(['runtime:chat', 'runtime:records'])).apiKey;
  server = http.createServer((req, res) => {
    const url = req.url ?? '';
    if (url === '/article') return (res.setHeader('content-type', 'text/html; charset=utf-8'), res.end(ARTICLE));
    if (url === '/gzip') {
      res.setHeader('content-type', 'text/html');
      res.setHeader('content-encoding', 'gzip');
      return res.end(zlib.gzipSync(ARTICLE.replace('Alpine marmots</h1>', 'Compressed marmots</h1>')));
    }
    if (url === '/moved') return res.writeHead(302, { location: '/article' }).end();
    if (url === '/loop') return res.writeHead(302, { location: '/loop' }).end();
    if (url === '/huge') return (res.setHeader('content-type', 'text/plain'), res.end('x'.repeat(LIMIT * 2)));
    if (url === '/huge-stream') {
      res.setHeader('content-type', 'text/plain');
      for (let i = 0; i < 40; i++) res.write('y'.repeat(4096));
      return res.end();
    }
    if (url === '/image')
      return (
        res.setHeader('content-type', 'text/html'),
        res.end(Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000', 'hex'))
      );
    if (url === '/utf16') {
      // Declared UTF-16 text; file-type takes the byte-order mark for an MPEG audio frame.
      res.setHeader('content-type', 'text/plain; charset=utf-16le');
      return res.end(
        Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Marmots whistle. '.repeat(30), 'utf16le')]),
      );
    }
    if (url === '/stray-nul') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      return res.end(ARTICLE.replace('Alpine marmots', 'Alpine\u0000 marmots'));
    }
    if (url === '/boom') return res.writeHead(500).end('oops');
    if (url === '/slow') return void setTimeout(() => res.end('late'), 2000);
    res.writeHead(404).end('no');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await h?.close();
});

test('a page is fetched, its readable article extracted (no navigation, ads or scripts) and remembered as knowledge', async () => {
  const r = await h.req('POST', '/v1/ingest/web', { key, body: { url: `${base}/article` } });
  expect(r.status).toBe(201);
  expect(r.body).toMatchObject({
    chunks: 1,
    memories: 1,
    document: {
      source_kind: 'web',
      media_type: 'text/html',
      provenance: { url: `${base}/article`, final_url: `${base}/article` },
    },
  });
  expect(r.body.document.title).toMatch(/marmots/i);
  expect(r.body.document.excerpt).toContain('Alpine marmots hibernate for up to nine months');
  const mem = await h.req('GET', '/v1/memories/knowledge', { key });
  expect(mem.body.data[0]).toMatchObject({ kind: 'knowledge', provenance: 'read', document_id: r.body.document.id });
  expect(mem.body.data[0].content).not.toMatch(/Subscribe|Advertisement|track\(\)/);
  const s = await h.req('GET', '/v1/enterprise/knowledge/search?q=eagles%20sentinels', { key });
  expect(s.body.data[0]).toMatchObject({ document_id: r.body.document.id, url: `${base}/article`, source_kind: 'web' });
});

test('gzip bodies are decoded and redirects followed (final_url recorded)', async () => {
  const z = await h.req('POST', '/v1/ingest/web', { key, body: { url: `${base}/gzip` } });
  expect(z.status).toBe(201);
  expect(z.body.document.excerpt).toContain('Alpine marmots hibernate');
  const m = await h.req('POST', '/v1/ingest/web', { key, body: { url: `${base}/moved` } });
  expect(m.body.document.provenance).toEqual({ url: `${base}/moved`, final_url: `${base}/article` });
});

test('text the server declares is read as text: a UTF-16 page, and a page with a stray NUL (browsers drop it)', async () => {
  // Both were 415: the sniffer called the first audio/mpeg and the second binary.
  const utf16 = await h.req('POST', '/v1/ingest/web', { key, body: { url: `${base}/utf16` } });
  expect(utf16.status).toBe(201);
  expect(utf16.body.document.media_type).toBe('text/plain');
  const nul = await h.req('POST', '/v1/ingest/web', { key, body: { url: `${base}/stray-nul` } });
  expect(nul.status).toBe(201);
  expect(nul.body.document).toMatchObject({ media_type: 'text/html', title: 'Field guide: alpine marmots' });
  const text = await h.req('GET', `/v1/documents/${nul.body.document.id}`, { key });
  expect(text.status).toBe(200);
  expect(JSON.stringify(text.body)).not.toContain('\\u0000');
});

test('upstream failures map to 502 with a useful message; unsupported content to 415', async () => {
  const cases: Array<[string, number, RegExp]> = [
    ['/missing', 502, /HTTP 404/],
    ['/boom', 502, /HTTP 500/],
    ['/huge', 502, /larger than the 65536-byte limit/],
    ['/huge-stream', 502, /larger than/],
    ['/loop', 502, /Too many redirects/],
    ['/image', 415, /image\/png/],
  ];
  for (const [p, status, message] of cases) {
    const r = await h.req('POST', '/v1/ingest/web', { key, body: { url: `${base}${p}` } });
    expect([p, r.status, r.body.error]).toEqual([p, status, expect.stringMatching(message)]);
  }
  expect((await h.req('POST', '/v1/ingest/web', { key, body: { url: 'http://no-such-host.invalid/' } })).status).toBe(
    502,
  );
  expect((await h.req('POST', '/v1/ingest/web', { key, body: {} })).status).toBe(400);
});

test('the time limit answers upstream_timeout; with private fetch off, a loopback URL is refused before connecting', async () => {
  await expect(fetchWeb(`${base}/slow`, { allowPrivate: true, maxBytes: 1000, timeoutMs: 200 })).rejects.toMatchObject({
    code: 'upstream_timeout',
    status: 504,
  });
  let hits = 0;
  const counter = http.createServer((_req, res) => (hits++, res.end('hi')));
  await new Promise<void>((r) => counter.listen(0, '127.0.0.1', () => r()));
  const port = (counter.address() as AddressInfo).port;
  try {
    await expect(
      fetchWeb(`http://127.0.0.1:${port}/`, { allowPrivate: false, maxBytes: 1000, timeoutMs: 2000 }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(
      fetchWeb(`http://127.0.0.1:${port}/`, { allowPrivate: true, maxBytes: 1000, timeoutMs: 2000 }),
    ).resolves.toMatchObject({ body: Buffer.from('hi') });
    expect(hits).toBe(1);
  } finally {
    counter.closeAllConnections();
    await new Promise((r) => counter.close(r));
  }
});
