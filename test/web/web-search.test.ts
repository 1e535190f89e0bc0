import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { classifyIntent } from '../../activities/web/search-intent';
import { normaliseUrl, webSearch } from '../../activities/web/web-search';
import { unstorablePaths } from '../../schema/storable';
import { startHarness, type Harness } from '../helpers/harness';
import { startPages, type PageServer } from './pages';

jest.setTimeout(120_000);

// Three real local servers speaking SearXNG's, Brave's and Tavily's JSON formats; a fourth never answers.
let h: Harness;
let none: Harness;
let key: string;
let engines: PageServer;
const seen: Record<string, unknown[]> = { searx: [], brave: [], tavily: [] };
beforeAll(async () => {
  engines = await startPages();
  engines.route('/searx/search', (q, res) => {
    const u = new URL(q.url ?? '', 'http://x');
    seen.searx.push(Object.fromEntries(u.searchParams));
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        results: [
          {
            url: 'https://www.example.org/marmots/?utm_source=feed',
            title: 'Marmots',
            content: 'Marmots hibernate.',
            publishedDate: '2024-01-02T00:00:00Z',
          },
          {
            url: 'https://wiki.example.com/Marmot',
            title: 'Marmot - Wiki',
            content: 'A marmot is a large ground squirrel.',
          },
          { url: 'https://blocked.example.net/x', title: 'Blocked', content: 'excluded domain' },
        ],
      }),
    );
  });
  engines.route('/brave/res/v1/web/search', (q, res) => {
    seen.brave.push({
      token: q.headers['x-subscription-token'],
      q: new URL(q.url ?? '', 'http://x').searchParams.get('q'),
    });
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        web: {
          results: [
            {
              url: 'https://example.org/marmots#top',
              title: 'Marmots (Brave)',
              description: 'Alpine marmots hibernate for nine months in burrows.',
            },
            { url: 'https://zoo.example.com/marmot', title: 'Zoo marmot', description: 'Visit the marmots.' },
          ],
        },
      }),
    );
  });
  engines.route('/tavily/search', (q, res) => {
    let body = '';
    q.on('data', (c) => (body += c));
    q.on('end', () => {
      seen.tavily.push({ auth: q.headers.authorization, body: JSON.parse(body) });
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          results: [
            {
              url: 'http://wiki.example.com/Marmot/',
              title: 'Marmot',
              content: 'Ground squirrel of the genus Marmota.',
              score: 0.9,
            },
          ],
        }),
      );
    });
  });
  engines.route('/hang/search', () => undefined);
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-search-'));
  const file = path.join(dir, 'svc.yaml');
  writeFileSync(
    file,
    [
      'search:',
      '  engines:',
      `    - { name: searx, type: searxng, base_url: "${engines.url}/searx" }`,
      `    - { name: brave, type: brave, base_url: "${engines.url}/brave", api_key: brave-key }`,
      `    - { name: tavily, type: tavily, base_url: "${engines.url}/tavily", api_key: tvly-key }`,
      `    - { name: stuck, type: searxng, base_url: "${engines.url}/hang", timeout_ms: 300 }`,
      `    - { name: newsonly, type: searxng, base_url: "${engines.url}/hang", intents: [news] }`,
    ].join('\n'),
  );
  h = await startHarness({ env: { SVC_CONFIG: file } });
  none = await startHarness();
  key = (await h.key(['runtime:chat'])).apiKey;
});
afterAll(async () => {
  await engines?.close();
  await h?.close();
  await none?.close();
});

test('engines are queried in parallel; a hanging engine times out into a partial answer; URLs are merged across engines', async () => {
  const r = await h.req('POST', '/v1/capabilities/web-search', {
    key,
    body: { query: 'alpine marmot', exclude_domains: ['blocked.example.net'] },
  });
  expect(r.status).toBe(200);
  expect(r.body.partial).toBe(true);
  expect(r.body.intent).toBe('general');
  const byName = Object.fromEntries(r.body.engines.map((e: { name: string }) => [e.name, e]));
  expect(byName.stuck).toMatchObject({ status: 'timeout' });
  expect(byName.newsonly).toMatchObject({ status: 'skipped' });
  for (const n of ['searx', 'brave', 'tavily']) expect(byName[n]).toMatchObject({ status: 'ok' });
  const urls = r.body.results.map((x: { url: string }) => x.url);
  expect(urls).not.toContain('https://blocked.example.net/x');
  // example.org/marmots (searx + brave) and wiki.example.com/Marmot (searx + tavily) are one result each.
  expect(r.body.results).toHaveLength(3);
  const marmots = r.body.results.find(
    (x: { engines: string[] }) => x.engines.includes('brave') && x.engines.includes('searx'),
  );
  expect(marmots).toMatchObject({
    snippet: 'Alpine marmots hibernate for nine months in burrows.',
    published_at: '2024-01-02T00:00:00.000Z',
  });
  expect(r.body.results[0].score).toBeGreaterThan(r.body.results[2].score);
  expect(r.body.results[2].engines).toEqual(['brave']);
  expect(seen.brave[0]).toEqual({ token: 'brave-key', q: 'alpine marmot' });
  expect(seen.tavily[0]).toMatchObject({
    auth: 'Bearer tvly-key',
    body: { query: 'alpine marmot', topic: 'general', exclude_domains: ['blocked.example.net'] },
  });
});

test('the intent picks categories and engines, and can be overridden', async () => {
  const r = await h.req('POST', '/v1/capabilities/web-search', {
    key,
    body: { query: 'python TypeError in list comprehension', max_results: 1 },
  });
  expect(r.body.intent).toBe('code');
  expect(r.body.results).toHaveLength(1);
  expect(seen.searx.at(-1)).toMatchObject({ categories: 'it', format: 'json' });
  const n = await h.req('POST', '/v1/capabilities/web-search', {
    key,
    body: { query: 'marmots', intent: 'news', time_range: 'week' },
  });
  expect(n.body.intent).toBe('news');
  expect(seen.searx.at(-1)).toMatchObject({ categories: 'news', time_range: 'week' });
  expect(n.body.engines.find((e: { name: string }) => e.name === 'newsonly').status).toBe('timeout');
});

test('classifier rules and URL normalisation are deterministic', () => {
  expect(
    [
      'latest election news',
      'arxiv paper on diffusion',
      'buy cheap hiking boots',
      'what is a marmot',
      'marmot photos',
    ].map(classifyIntent),
  ).toEqual(['news', 'academic', 'shopping', 'reference', 'general']);
  expect(normaliseUrl('https://WWW.Example.org/a/?b=2&utm_source=x&a=1#frag')).toBe('example.org/a?a=1&b=2');
  expect(normaliseUrl('http://example.org/a')).toBe(normaliseUrl('https://example.org/a/'));
  expect(normaliseUrl('javascript:alert(1)')).toBeNull();
});

test('bad input is 400 naming the field; no engine configured is 503 saying how to configure one', async () => {
  const bad = await h.req('POST', '/v1/capabilities/web-search', { key, body: { query: '', max_results: 500 } });
  expect(bad.status).toBe(400);
  expect(bad.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['body.max_results', 'body.query']);
  const k = (await none.key(['runtime:chat'])).apiKey;
  const r = await none.req('POST', '/v1/capabilities/web-search', { key: k, body: { query: 'marmots' } });
  expect(r).toMatchObject({ status: 503, body: { error: expect.stringMatching(/search\.engines.*SVC_CONFIG/) } });
});

test('an engine answering odd JSON: bad items skipped, text made storable, a missing list is the engine failing', async () => {
  // Research runs and agent transcripts store these results: one title with NUL or a lone surrogate used to fail the
  // whole research run ("…contains a null byte…"); one null item failed the engine with a TypeError's message.
  let answer = '';
  engines.route('/odd/search', (_q, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(answer));
  const odd = [{ name: 'odd', type: 'searxng' as const, base_url: `${engines.url}/odd`, timeout_ms: 2000 }];
  const search = () => webSearch(odd, { query: 'marmots', max_results: 50 });
  answer =
    '{"results":[null,7,"x",[],{"url":"https://example.org/n\\u0000ul","title":"ti\\u0000tle","content":"half\\ud800"},' +
    '{"url":5,"title":{}},{"url":"javascript:alert(1)","title":"js"},{"url":"https://example.org/ok","title":"Ok"}]}';
  const r = await search();
  expect(r.results.map((x) => [x.title, x.url, x.snippet])).toEqual([
    ['ti\uFFFDtle', 'https://example.org/n%EF%BF%BDul', 'half\uFFFD'],
    ['Ok', 'https://example.org/ok', ''],
  ]);
  expect(unstorablePaths(r, 'r')).toEqual([]);
  for (const bad of ['{"results":{"a":1}}', 'null', '[1,2]']) {
    answer = bad;
    await expect(search()).rejects.toThrow(
      'Every search engine failed: odd error (odd answered JSON without a list of results).',
    );
  }
  // Only the first 100 of a huge list are read (20,000 took 2 s to merge).
  answer = JSON.stringify({ results: Array.from({ length: 20_000 }, (_, i) => ({ url: `https://example.org/${i}` })) });
  expect((await search()).engines[0].results).toBe(100);
});
