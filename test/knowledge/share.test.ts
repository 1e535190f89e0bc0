import http from 'node:http';
import { startHarness, type Harness } from '../helpers/harness';
import { withHarness } from '../helpers/with-harness';
import { openBrowser, type PageProbe } from './browser';

let h: Harness;
let key: string;
withHarness(
  { scopes: ['runtime:chat'], env: { SVC_PUBLIC_URL: 'https://svc.example.com/v1' } },
  (harness, k) => ((h = harness), (key = k)),
);

const HOSTILE = `# Release notes

Hello **world**, the beta ships on *Friday*.

| step | owner |
| --- | --- |
| build | Ada |

<script>window.__pwned = 1; document.title = 'PWNED';</script>
<img src="x" onerror="window.__pwned = 2">
<svg onload="window.__pwned = 3"></svg>
<iframe src="javascript:parent.__pwned = 4"></iframe>
<a href="javascript:window.__pwned = 5" id="bad">bad link</a>

[md link](javascript:window.__pwned=6) and [good link](https://example.com/docs)
<div style="background:url(javascript:alert(1))" onclick="window.__pwned = 7">styled</div>
`;

test('create returns the public url (origin of SVC_PUBLIC_URL, no /v1); list is recent and tenant-scoped', async () => {
  const r = await h.req('POST', '/v1/share', { key, body: { title: 'Notes', content: 'hello' } });
  expect(r.status).toBe(201);
  expect(r.body).toMatchObject({
    title: 'Notes',
    format: 'markdown',
    url: `https://svc.example.com/share/${r.body.id}`,
  });
  expect(r.body.id).toMatch(/^shr_[0-9a-z]{24}$/);
  const second = await h.req('POST', '/v1/share', {
    key,
    body: { title: 'Second', content: '<p>x</p>', format: 'html' },
  });
  const list = await h.req('GET', '/v1/shares', { key });
  expect(list.body.data.map((s: { id: string }) => s.id)).toEqual([second.body.id, r.body.id]);
  expect(list.body.data[0].url).toBe(second.body.url);
  const other = (await h.key(['runtime:chat'])).apiKey;
  expect((await h.req('GET', '/v1/shares', { key: other })).body).toMatchObject({ data: [], total: 0 });
  expect((await h.req('POST', '/v1/share', { key, body: { title: 'x', content: 'y', format: 'pdf' } })).status).toBe(
    400,
  );
  expect((await h.req('POST', '/v1/share', { key, body: { content: 'y' } })).status).toBe(400);
  expect((await h.req('GET', '/v1/shares', { key: (await h.key(['runtime:records'])).apiKey })).status).toBe(200);
  expect(
    (await h.req('GET', '/v1/shares', { key: (await h.key(['bootstrap:app:home'], { kind: 'bootstrap' })).apiKey }))
      .status,
  ).toBe(403);
});

test('the public page is sanitised HTML with title, social meta tags and a strict CSP; unknown ids get a 404 page', async () => {
  const r = await h.req('POST', '/v1/share', { key, body: { title: 'Release <notes> & "plans"', content: HOSTILE } });
  const page = await h.req('GET', `/share/${r.body.id}`);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
  const html = page.text;
  expect(html).toContain('<title>Release &lt;notes&gt; &amp; &quot;plans&quot;</title>');
  expect(html).toContain(`<meta property="og:url" content="https://svc.example.com/share/${r.body.id}">`);
  expect(html).toMatch(
    /<meta property="og:description" content="Release notes Hello world, the beta ships on Friday\./,
  );
  expect(html).toContain('<meta name="twitter:card" content="summary">');
  expect(html).not.toMatch(/<script|onerror|onload|onclick|javascript:|<iframe|style="background/i);
  expect(html).toContain('<a href="https://example.com/docs" rel="noopener noreferrer nofollow">good link</a>');

  for (const id of ['shr_000000000000000000000000', 'nope', '..%2f..%2fetc']) {
    const missing = await h.req('GET', `/share/${id}`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/^text\/html/);
    expect(missing.text).toContain('<title>Share not found</title>');
  }
  expect((await h.req('GET', `/v1/share/${r.body.id}`)).status).toBe(404);
});

test('an id of any length is just an unknown share: the 404 page, never a JSON 400', async () => {
  for (const id of ['x'.repeat(101), 'shr_' + 'a'.repeat(300), encodeURIComponent('ü'.repeat(120))]) {
    const missing = await h.req('GET', `/share/${id}`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/^text\/html/);
    expect(missing.text).toContain('<title>Share not found</title>');
  }
});

test('with SVC_PUBLIC_URL the page is publicly cacheable and a forged Host header changes nothing', async () => {
  const r = await h.req('POST', '/v1/share', { key, body: { title: 'Cached', content: 'hi' } });
  const page = await rawGet(h.url, `/share/${r.body.id}`, 'evil.example');
  expect(page.status).toBe(200);
  expect(page.headers['cache-control']).toBe('public, max-age=300');
  expect(page.body).toContain(`<meta property="og:url" content="https://svc.example.com/share/${r.body.id}">`);
  expect(page.body).not.toContain('evil.example');
});

describe('without SVC_PUBLIC_URL', () => {
  let bare: Harness;
  let bareKey: string;
  beforeAll(async () => {
    bare = await startHarness({ env: { HOST: '127.0.0.1', PORT: '8123' } });
    bareKey = (await bare.key(['runtime:chat'])).apiKey;
  });
  afterAll(async () => bare?.close());

  test('share URLs come from the configured HOST:PORT, never the Host header, and the page is private to the reader', async () => {
    const created = await rawRequest(
      bare.url,
      'POST',
      '/v1/share',
      'evil.example',
      { authorization: `Bearer ${bareKey}`, 'content-type': 'application/json' },
      JSON.stringify({ title: 'T', content: 'body' }),
    );
    expect(created.status).toBe(201);
    const id = JSON.parse(created.body).id as string;
    expect(JSON.parse(created.body).url).toBe(`http://127.0.0.1:8123/share/${id}`);
    const list = await rawRequest(bare.url, 'GET', '/v1/shares', 'evil.example', {
      authorization: `Bearer ${bareKey}`,
    });
    expect(JSON.parse(list.body).data[0].url).toBe(`http://127.0.0.1:8123/share/${id}`);
    const page = await rawGet(bare.url, `/share/${id}`, 'evil.example:666');
    expect(page.status).toBe(200);
    expect(page.body).toContain(`<meta property="og:url" content="http://127.0.0.1:8123/share/${id}">`);
    expect(page.body).not.toContain('evil.example');
    expect(page.headers['cache-control']).toBe('private, max-age=300');
  });
});

/** A request with an arbitrary Host header (fetch does not let a caller forge it). */
function rawRequest(
  base: string,
  method: string,
  path: string,
  host: string,
  headers: Record<string, string> = {},
  body?: string,
) {
  const u = new URL(base);
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path, headers: { ...headers, host } }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
const rawGet = (base: string, path: string, host: string) => rawRequest(base, 'GET', path, host);

describe('in headless Chromium', () => {
  let browser: PageProbe;
  beforeAll(async () => {
    browser = await openBrowser();
  }, 30_000);
  afterAll(async () => browser?.close());

  test('the content renders and no injected script runs', async () => {
    const r = await h.req('POST', '/v1/share', { key, body: { title: 'Release notes', content: HOSTILE } });
    await browser.open(`${h.url}/share/${r.body.id}`);
    // Give handlers (onerror of the broken image, svg onload) a moment to fire if they existed.
    await browser.evaluate('new Promise((r) => setTimeout(r, 300))');
    const seen = await browser.evaluate<Record<string, unknown>>(`({
      pwned: window.__pwned ?? null,
      title: document.title,
      h1: document.querySelector('header h1').textContent,
      bold: document.querySelector('.content strong')?.textContent,
      cell: document.querySelector('.content td')?.textContent,
      text: document.body.innerText,
      scripts: document.scripts.length,
      handlers: [...document.querySelectorAll('*')].flatMap((e) => [...e.attributes].map((a) => a.name)).filter((n) => n.startsWith('on')),
      jsLinks: [...document.querySelectorAll('a')].filter((a) => (a.getAttribute('href') || '').startsWith('javascript')).length,
      ogTitle: document.querySelector('meta[property="og:title"]').content,
      width: document.querySelector('main').getBoundingClientRect().width,
    })`);
    expect(seen).toMatchObject({
      pwned: null,
      title: 'Release notes',
      h1: 'Release notes',
      bold: 'world',
      cell: 'build',
      scripts: 0,
      handlers: [],
      jsLinks: 0,
      ogTitle: 'Release notes',
    });
    expect(seen.text).toContain('Hello world, the beta ships on Friday.');
    expect(seen.text).toContain('good link');
    expect(seen.width).toBeGreaterThan(200);
    // Clicking the neutralised link must not run anything either.
    await browser.evaluate(
      `document.getElementById('bad')?.click(); [...document.querySelectorAll('a')].find((a) => a.textContent === 'md link')?.click(); 0`,
    );
    expect(await browser.evaluate('window.__pwned ?? null')).toBeNull();
    expect(browser.events.filter((e) => e.startsWith('error'))).toEqual([]);
  });
});
