import iconv from 'iconv-lite';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { startHarness, type Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';
import { startPages, type PageServer } from './pages';

jest.setTimeout(120_000);

const ARTICLE = `<!doctype html><html lang="en"><head><title>Marmots of the Alps | Field Notes</title>
<meta property="og:site_name" content="Field Notes"><meta name="author" content="Ada Lovelace">
<meta property="article:published_time" content="2024-05-01T10:00:00Z"></head><body>
<nav><a href="/">Home</a> <a href="/shop">Shop</a></nav>
<header class="site-header">Subscribe to our newsletter</header>
<article><h1>Marmots of the Alps</h1>
<p>Alpine marmots hibernate for up to nine months, huddled together in burrows lined with dry grass and hay.</p>
<h2>Colony life</h2>
<p>Sentinels whistle sharply when eagles circle overhead, and the whole colony dives underground within seconds of the alarm.</p>
<ul><li>Pups appear in early July, about forty days after birth.</li><li>Adults weigh up to seven kilograms before winter.</li></ul>
<table><thead><tr><th>Month</th><th>Activity</th></tr></thead><tbody><tr><td>June</td><td>Mating season ends</td></tr><tr><td>October</td><td>Hibernation begins</td></tr></tbody></table>
<pre><code>count_marmots(colony)  # returns the census</code></pre>
<p>Researchers in the Berchtesgaden national park have tracked the same colonies for more than thirty years, counting <a href="/census">every burrow</a>.</p>
</article>
<aside class="related">Related: buy hiking boots</aside><footer>© Field Notes</footer><script>track()</script></body></html>`;

let h: Harness;
let key: string;
let pages: PageServer;
beforeAll(async () => {
  h = await startHarness({ env: { SVC_ALLOW_PRIVATE_FETCH: 'true' } });
  key = (await h.key(['runtime:chat'])).apiKey;
  pages = await startPages();
  pages.serve('/article', 'text/html; charset=utf-8', ARTICLE);
});
afterAll(async () => {
  await pages?.close();
  await h?.close();
});

const fetchUrl = (body: Record<string, unknown>, k = key) =>
  h.req('POST', '/v1/capabilities/web-fetch', { key: k, body });

test('an article becomes clean Markdown (headings, lists, tables, code kept; navigation, ads, scripts dropped) with its metadata', async () => {
  const r = await fetchUrl({ url: `${pages.url}/article`, include_links: true });
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({
    url: `${pages.url}/article`,
    final_url: `${pages.url}/article`,
    status: 200,
    content_type: 'text/html',
    charset: 'utf-8',
    title: 'Marmots of the Alps | Field Notes',
    site_name: 'Field Notes',
    byline: 'Ada Lovelace',
    published_at: '2024-05-01T10:00:00.000Z',
    lang: 'en',
    truncated: false,
    cached: false,
  });
  const md: string = r.body.markdown;
  expect(md).toMatch(/^## Colony life$/m);
  expect(md).toMatch(/^- Pups appear in early July/m);
  expect(md).toMatch(/\| Month \| Activity \|/);
  expect(md).toMatch(/```\ncount_marmots\(colony\)/);
  expect(md).toContain(`[every burrow](${pages.url}/census)`);
  expect(md).not.toMatch(/Shop|Subscribe|hiking boots|track\(\)|©/);
  expect(r.body.text).toContain('Sentinels whistle sharply');
  expect(r.body.text).not.toMatch(/\]\(|##/);
  expect(r.body.links).toContainEqual({ text: 'every burrow', url: `${pages.url}/census` });
  expect(r.body.token_estimate).toBeGreaterThan(50);
});

test('max_tokens cuts at a block boundary and says so; format text and html; a selector picks the content', async () => {
  const full = await fetchUrl({ url: `${pages.url}/article`, cache: false });
  const cut = await fetchUrl({ url: `${pages.url}/article`, max_tokens: 40, cache: false });
  expect(cut.body.truncated).toBe(true);
  expect(cut.body.token_estimate).toBeLessThanOrEqual(40);
  expect(full.body.markdown.startsWith(cut.body.markdown)).toBe(true);
  // The cut ends where a block of the full text ends.
  expect(full.body.markdown.slice(cut.body.markdown.length, cut.body.markdown.length + 2)).toBe('\n\n');
  const text = await fetchUrl({ url: `${pages.url}/article`, format: 'text', max_tokens: 30 });
  expect(text.body.truncated).toBe(true);
  expect(text.body.text).toMatch(/^Alpine marmots hibernate/);
  const html = await fetchUrl({ url: `${pages.url}/article`, format: 'html' });
  expect(html.body.html).toMatch(/<table>/);
  const sel = await fetchUrl({ url: `${pages.url}/article`, selector: 'table', cache: false });
  expect(sel.body.text).toMatch(/Hibernation begins/);
  expect(sel.body.text).not.toMatch(/Sentinels/);
});

test('PDF, JSON, plain text and legacy charsets (header and meta) are read', async () => {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  pdf.setTitle('Marmot census 2024');
  pdf.addPage().drawText('The marmot census counted 412 animals in 38 burrows.', { x: 50, y: 700, size: 12, font });
  const pdfBytes = Buffer.from(await pdf.save());
  pages.serve('/census.pdf', 'application/octet-stream', pdfBytes);
  pages.serve('/data', 'application/json', '{"colony":"Gemsstock","count":41}');
  pages.serve('/notes.txt', 'text/plain', 'Plain notes about marmots.\n\nSecond paragraph.');
  pages.serve(
    '/latin1',
    'text/html; charset=iso-8859-1',
    iconv.encode(
      '<html><body><p>Caf\u00e9 cr\u00e8me near the marmot burrows, served na\u00efvely all summer long by the hut keeper.</p></body></html>',
      'latin1',
    ),
  );
  pages.serve(
    '/cyrillic',
    'text/html',
    iconv.encode(
      '<html><head><meta charset="windows-1251"></head><body><p>\u0421\u0443\u0440\u043a\u0438 \u0436\u0438\u0432\u0443\u0442 \u0432 \u0433\u043e\u0440\u0430\u0445 \u0438 \u0441\u043f\u044f\u0442 \u0432\u0441\u044e \u0437\u0438\u043c\u0443.</p></body></html>',
      'win1251',
    ),
  );

  const p = await fetchUrl({ url: `${pages.url}/census.pdf` });
  expect(p.body).toMatchObject({ content_type: 'application/pdf', title: 'Marmot census 2024' });
  expect(p.body.text).toContain('412 animals in 38 burrows');
  const j = await fetchUrl({ url: `${pages.url}/data` });
  expect(j.body.content_type).toBe('application/json');
  expect(j.body.markdown).toBe('```json\n{\n  "colony": "Gemsstock",\n  "count": 41\n}\n```');
  const t = await fetchUrl({ url: `${pages.url}/notes.txt` });
  expect(t.body).toMatchObject({ content_type: 'text/plain', text: 'Plain notes about marmots.\n\nSecond paragraph.' });
  const l = await fetchUrl({ url: `${pages.url}/latin1` });
  expect(l.body).toMatchObject({ charset: 'iso-8859-1' });
  expect(l.body.text).toContain('Caf\u00e9 cr\u00e8me');
  const c = await fetchUrl({ url: `${pages.url}/cyrillic` });
  expect(c.body.charset).toBe('windows-1251');
  expect(c.body.text).toContain('\u0421\u0443\u0440\u043a\u0438 \u0436\u0438\u0432\u0443\u0442');
});

test('stray NULs and unpaired UTF-16 surrogates: the page is read and cached, not refused or lost', async () => {
  // A page with one NUL was 415 "not a page"; a UTF-16 page with an unpaired surrogate was 400 "a value the database
  // cannot store" (the cache write), and both failed research sources and task steps.
  pages.serve('/stray-nul', 'text/html; charset=utf-8', ARTICLE.replace('Alpine marmots', 'Alpine\u0000 marmots'));
  const lone = Buffer.concat([
    Buffer.from([0xff, 0xfe]),
    Buffer.from('Lone ', 'utf16le'),
    Buffer.from([0x00, 0xd8]),
    Buffer.from(' surrogate. '.repeat(20), 'utf16le'),
  ]);
  pages.serve('/lone', 'text/plain; charset=utf-16le', lone);
  pages.serve('/zeros', 'text/plain', Buffer.alloc(4096, 'ab\u0000\u0000'));
  const nul = await fetchUrl({ url: `${pages.url}/stray-nul` });
  expect(nul.status).toBe(200);
  expect(nul.body.markdown).toContain('Alpine marmots hibernate');
  expect(nul.body.markdown).not.toContain('\u0000');
  for (const cached of [false, true]) {
    const r = await fetchUrl({ url: `${pages.url}/lone` });
    expect([r.status, r.body.cached]).toEqual([200, cached]);
    expect(r.body.text).toMatch(/^Lone \uFFFD surrogate\./);
  }
  // Mostly zero bytes is a binary file whatever the server calls it.
  expect((await fetchUrl({ url: `${pages.url}/zeros` })).status).toBe(415);
});

test('the per-URL cache: fresh hits skip the network, stale entries revalidate with ETag / Last-Modified (304), cache:false downloads', async () => {
  let version = 'one';
  // The body is read per request: `version` changes below.
  pages.route('/cached', (_q, res) =>
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`Cached page version ${version}.`),
  );
  const a = await fetchUrl({ url: `${pages.url}/cached` });
  const b = await fetchUrl({ url: `${pages.url}/cached` });
  expect([a.body.cached, b.body.cached, pages.hits.get('/cached')]).toEqual([false, true, 1]);
  version = 'two';
  const c = await fetchUrl({ url: `${pages.url}/cached`, cache: false });
  expect([c.body.cached, c.body.text, pages.hits.get('/cached')]).toEqual([false, 'Cached page version two.', 2]);
  // Another tenant has its own cache.
  const other = (await h.key(['runtime:chat'])).apiKey;
  expect((await fetchUrl({ url: `${pages.url}/cached` }, other)).body.cached).toBe(false);

  const seen: Array<Record<string, string | undefined>> = [];
  pages.route('/etag', (q, res) => {
    seen.push({
      inm: q.headers['if-none-match'] as string | undefined,
      ims: q.headers['if-modified-since'] as string | undefined,
    });
    if (q.headers['if-none-match'] === '"v1"') return res.writeHead(304).end();
    res
      .writeHead(200, {
        'content-type': 'text/plain',
        etag: '"v1"',
        'last-modified': 'Wed, 01 May 2024 10:00:00 GMT',
        'cache-control': 'max-age=0',
      })
      .end('Revalidated page.');
  });
  const e1 = await fetchUrl({ url: `${pages.url}/etag` });
  const e2 = await fetchUrl({ url: `${pages.url}/etag` });
  expect([e1.body.cached, e1.body.status]).toEqual([false, 200]);
  expect([e2.body.cached, e2.body.status, e2.body.text]).toEqual([true, 304, 'Revalidated page.']);
  expect(seen).toEqual([
    { inm: undefined, ims: undefined },
    { inm: '"v1"', ims: 'Wed, 01 May 2024 10:00:00 GMT' },
  ]);
});

test('a page nested thousands of elements deep is read as flat text, with its title and every paragraph', async () => {
  // Before: Readability's time grew with the cube of the depth (20 s at 1,000) and Turndown overflowed
  // its stack from ~5,000 levels, so this page came back empty after the process had been blocked for minutes.
  const deep = 6000;
  const page =
    '<!doctype html><html><head><title>Deep &amp; narrow</title></head><body>' +
    '<p>The first paragraph tells how the burrows were mapped over three decades of fieldwork.</p>' +
    '<div>'.repeat(deep) +
    '<p>The innermost paragraph reports that the colony counted eighty-one marmots this year.</p>' +
    '</div>'.repeat(deep) +
    '</body></html>';
  pages.serve('/deep', 'text/html', page);
  const r = await fetchUrl({ url: `${pages.url}/deep`, cache: false });
  expect(r.status).toBe(200);
  expect(r.body.title).toBe('Deep & narrow');
  expect(r.body.markdown).toContain('three decades of fieldwork.');
  expect(r.body.markdown).toContain('eighty-one marmots this year.');
});

test('a page too heavy to read is stopped at the extraction deadline with 502, and the API answers others meanwhile', async () => {
  // 2 MB of "<": linkedom, Readability and Turndown took ~30 s of the API process's only thread.
  pages.serve('/heavy', 'text/html', `<html><body><p>hi</p>${'<'.repeat(2_000_000)}</body></html>`);
  let settled = false;
  const heavy = fetchUrl({ url: `${pages.url}/heavy`, cache: false }).finally(() => (settled = true));
  await pollUntil(
    async () => pages.hits.get('/heavy') ?? 0,
    (n) => n > 0,
    10_000,
  );
  await new Promise((r) => setTimeout(r, 500)); // the body is read and handed to a thread
  const health = await h.req('GET', '/v1/health');
  expect({ status: health.status, heavyStillRunning: !settled }).toEqual({ status: 200, heavyStillRunning: true });
  expect(await heavy).toMatchObject({
    status: 502,
    body: { code: 'upstream_error', error: expect.stringMatching(/could not be read within 10 s/) },
  });
});

test('a selector that does not parse is 400 naming body.selector, before any download', async () => {
  pages.serve('/never-fetched', 'text/html', ARTICLE);
  const r = await fetchUrl({ url: `${pages.url}/never-fetched`, selector: 'div:has(> p))' });
  expect(r.status).toBe(400);
  expect(r.body.details).toEqual([{ path: 'body.selector', message: expect.stringMatching(/^not a CSS selector/) }]);
  expect(pages.hits.get('/never-fetched')).toBeUndefined();
});

test('bad input is 400 naming the field; upstream errors 502; binary 415; refused schemes and credentials on a redirect hop are 400', async () => {
  pages.route('/boom', (_q, res) => res.writeHead(500).end('oops'));
  pages.serve('/png', 'image/png', Buffer.from('89504e470d0a1a0a0000000d4948445200', 'hex'));
  pages.route('/to-file', (_q, res) => res.writeHead(302, { location: 'file:///etc/passwd' }).end());
  pages.route('/to-creds', (_q, res) =>
    res.writeHead(302, { location: `http://user:pw@127.0.0.1:${pages.port}/article` }).end(),
  );
  const missing = await fetchUrl({});
  expect(missing.status).toBe(400);
  expect(missing.body.details[0].path).toBe('body.url');
  expect((await fetchUrl({ url: `${pages.url}/article`, max_tokens: 0 })).body.details[0].path).toBe('body.max_tokens');
  expect((await fetchUrl({ url: `${pages.url}/article`, format: 'pdf' })).status).toBe(400);
  expect(await fetchUrl({ url: `${pages.url}/boom` })).toMatchObject({
    status: 502,
    body: { error: expect.stringMatching(/HTTP 500/) },
  });
  expect((await fetchUrl({ url: `${pages.url}/png` })).status).toBe(415);
  expect(await fetchUrl({ url: `${pages.url}/to-file` })).toMatchObject({
    status: 400,
    body: { error: expect.stringMatching(/http and https only/) },
  });
  expect(await fetchUrl({ url: `${pages.url}/to-creds` })).toMatchObject({
    status: 400,
    body: { error: expect.stringMatching(/credentials/) },
  });
  expect((await fetchUrl({ url: 'ftp://example.com/x' })).status).toBe(400);
  expect(
    (
      await h.req('POST', '/v1/capabilities/web-fetch', {
        key: (await h.key(['runtime:records'])).apiKey,
        body: { url: `${pages.url}/article` },
      })
    ).status,
  ).toBe(403);
  expect((await h.req('POST', '/v1/capabilities/web-fetch', { body: { url: `${pages.url}/article` } })).status).toBe(
    401,
  );
});
