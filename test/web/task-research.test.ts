import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai';
import { startHarness, type Harness } from '../helpers/harness';
import { runTask } from '../tasks/run-task';
import { startPages, type PageServer } from './pages';

jest.setTimeout(180_000);

// The task `research` step with a search provider configured: a SearXNG-format engine and its
// pages on a real loopback server (allowed by an SVC_ALLOW_PRIVATE_FETCH list), the fake model upstream.
let h: Harness;
let key: string;
let web: PageServer;
let model: FakeOpenAI;

beforeAll(async () => {
  web = await startPages();
  web.route('/p1', (_q, res) =>
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(
        '<html><head><title>Tides</title></head><body><article><p>The tides are caused mainly by the gravitational pull of the Moon on the oceans.</p><p>The Sun adds a smaller tide, which is why spring tides happen at new and full moon.</p></article></body></html>',
      ),
  );
  web.route('/search', (q, res) => {
    const query = new URL(q.url ?? '', 'http://x').searchParams.get('q') ?? '';
    const results = /nothing/.test(query)
      ? []
      : [
          { url: `${web.url}/p1`, title: 'Tides', content: '' },
          { url: `${web.url}/gone`, title: 'Gone', content: '' },
        ];
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results }));
  });
  model = await startFakeOpenAI();
  model.onRequest((req) => {
    if (!String(req.body?.messages?.[0]?.content ?? '').includes('research report')) return undefined;
    return {
      reply: JSON.stringify({
        report: 'Tides come from the Moon [1]. Tides stop in winter [2].',
        citations: [
          { id: 1, source: 1, quote: 'caused mainly by the gravitational pull of the Moon' },
          { id: 2, source: 1, quote: 'tides stop completely during the winter' },
        ],
      }),
    };
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-task-research-'));
  const file = path.join(dir, 'svc.yaml');
  writeFileSync(file, `search:\n  engines:\n    - { name: local, type: searxng, base_url: "${web.url}" }\n`);
  h = await startHarness({
    worker: true,
    env: { SVC_CONFIG: file, OPENAI_BASE_URL: model.url, SVC_ALLOW_PRIVATE_FETCH: '127.0.0.1/32' },
  });
  key = (await h.key(['runtime:records'])).apiKey;
});
afterAll(async () => {
  await h?.close();
  await model?.close();
  await web?.close();
});

test('a research step searches, fetches and reports with verified citations; an invented quote loses its citation', async () => {
  const done = await runTask(h, key, {
    title: 'tides',
    steps: [{ id: 'r', title: 'research', action: 'research', args: { topic: 'What causes tides?' } }],
  });
  expect(done.status).toBe('completed');
  const result: string = done.steps[0].result;
  expect(result).toContain('Tides come from the Moon [1].');
  expect(result).not.toContain('[2]');
  expect(result).toContain(`[1] ${web.url}/p1 — “caused mainly by the gravitational pull of the Moon”`);
  expect(result).toMatch(/## Unverified[\s\S]*tides stop completely during the winter.*does not occur/);
  expect(result).toMatch(new RegExp(`## Sources not fetched\\n\\n- ${web.url}/gone: HTTP 404`));
  // The model saw the fetched page's text as numbered source material.
  const prompt = model.chats.find((c) => String(c.body.messages[0].content).includes('research report'))!;
  expect(prompt.body.messages[1].content).toContain('[S1] ' + web.url + '/p1');
  expect(prompt.body.messages[1].content).toContain('gravitational pull of the Moon');
  expect(web.hits.get('/p1')).toBe(1);
});

test('no search results: the step says so and cites nothing; the model is not asked to write a report', async () => {
  const before = model.chats.length;
  const done = await runTask(h, key, {
    title: 'empty',
    steps: [{ id: 'r', title: 'research', action: 'research', args: { topic: 'nothing at all' } }],
  });
  expect(done.status).toBe('completed');
  expect(done.steps[0].result).toMatch(/^No sources could be found or fetched for "nothing at all"/);
  expect(done.steps[0].result).not.toContain('## Citations');
  expect(model.chats.length).toBe(before);
});
