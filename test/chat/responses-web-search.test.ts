import OpenAI from 'openai';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai';
import { startHarness, type Harness } from '../helpers/harness';
import { contractErrors, streamEventErrors } from '../helpers/openai-contract';
import { pollUntil } from '../helpers/poll';
import { answerResults, startSearchEngine } from '../helpers/search-engine';
import type { PageServer } from '../web/pages';

// The Responses API's web_search tool: a real local SearXNG-format engine, the fake OpenAI-compatible lane (which cites
// the first result it is given as a markdown link), the real database and a real worker for background responses.

let h: Harness;
let fake: FakeOpenAI;
let engine: PageServer;
let key: string;
let client: OpenAI;
let searches: string[] = [];

const RESULTS = [
  { url: 'https://marmots.example/winter', title: 'Marmot winter', content: 'Alpine marmots hibernate for months.' },
  { url: 'https://marmots.example/colony', title: 'Marmot colonies', content: 'Colonies share body heat.' },
  { url: 'https://voles.example/food', title: 'Vole food', content: 'Voles eat roots.' },
];

beforeAll(async () => {
  let configFile: string;
  ({ engine, configFile } = await startSearchEngine((query, res) => {
    searches.push(query);
    answerResults(res, RESULTS);
  }));
  fake = await startFakeOpenAI();
  h = await startHarness({ worker: true, env: { SVC_CONFIG: configFile, OPENAI_BASE_URL: fake.url } });
  key = (await h.key(['runtime:chat'])).apiKey;
  client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
});
afterAll(async () => {
  await h?.close();
  await fake?.close();
  await engine?.close();
});
beforeEach(() => {
  searches = [];
  fake.reset();
  fake.onRequest((r) => {
    const system = String(r.body?.messages?.[0]?.content ?? '');
    const url = /\[1\] .*\n(https:\S+)/.exec(system)?.[1];
    return { reply: url ? `They hibernate ([Marmot winter](${url})).` : 'No sources.' };
  });
});

const tool = { type: 'web_search' as const, search_context_size: 'low' as const };

test('JSON: the last user message is searched, the lane gets the results, its link is a url_citation', async () => {
  const res = await client.responses.create({
    model: 'mid',
    input: 'How do marmots survive winter?',
    tools: [tool],
    include: ['web_search_call.action.sources'],
  });
  expect(contractErrors('Response', res)).toEqual([]);
  expect(searches).toEqual(['How do marmots survive winter?']);
  const [call, message] = res.output as any[];
  expect(call).toMatchObject({
    type: 'web_search_call',
    status: 'completed',
    action: { type: 'search', query: 'How do marmots survive winter?', queries: ['How do marmots survive winter?'] },
  });
  expect(call.id).toMatch(/^ws_/);
  expect(call.action.sources).toEqual(RESULTS.map((r) => ({ type: 'url', url: r.url })));
  const part = message.content[0];
  expect(part.annotations).toEqual([
    {
      type: 'url_citation',
      url: RESULTS[0].url,
      title: 'Marmot winter',
      start_index: part.text.indexOf('['),
      end_index: part.text.indexOf(')') + 1,
    },
  ]);
  expect(res.tools).toEqual([{ type: 'web_search', filters: null, search_context_size: 'low', user_location: null }]);
  // Without include the sources are not shown; allowed_domains keeps only those domains' results.
  const narrow = await client.responses.create({
    model: 'mid',
    input: 'Voles?',
    tools: [{ type: 'web_search_preview', filters: { allowed_domains: ['voles.example'] } } as never],
  });
  expect((narrow.output[0] as any).action.sources).toBeUndefined();
  const system = String(fake.chats.at(-1)!.body.messages[0].content);
  expect(system).toContain('[1] Vole food');
  expect(system).not.toContain('Marmot');
});

test('stream and background: the search events first, then the answer with its annotation', async () => {
  const stream = await client.responses.create({
    model: 'mid',
    input: 'Marmots in winter?',
    tools: [tool],
    stream: true,
  });
  const events: any[] = [];
  for await (const e of stream) events.push(e);
  for (const e of events) expect(streamEventErrors(e)).toEqual([]);
  expect(events.slice(2, 7).map((e) => e.type)).toEqual([
    'response.output_item.added',
    'response.web_search_call.in_progress',
    'response.web_search_call.searching',
    'response.web_search_call.completed',
    'response.output_item.done',
  ]);
  expect(events.find((e) => e.type === 'response.output_text.annotation.added')?.annotation).toMatchObject({
    type: 'url_citation',
    url: RESULTS[0].url,
  });
  const queued = await client.responses.create({
    model: 'mid',
    input: 'Marmots in winter?',
    tools: [tool],
    background: true,
  });
  const ended = await pollUntil(
    () => client.responses.retrieve(queued.id),
    (r) => r.status === 'completed' || r.status === 'failed',
  );
  expect(ended.output.map((o) => o.type)).toEqual(['web_search_call', 'message']);
  expect((ended.output[1] as any).content[0].annotations).toHaveLength(1);
});

test('refusals name the field and call no lane; an echoed web_search_call is taken and left out', async () => {
  const cases: Array<[unknown, string]> = [
    [{ tools: [{ type: 'web_search', external_web_access: false }] }, 'body.tools.0.external_web_access'],
    [
      { tools: [{ type: 'web_search', filters: { allowed_domains: ['not a domain'] } }] },
      'body.tools.0.filters.allowed_domains.0',
    ],
    [{ tools: [tool, { type: 'web_search_preview' }] }, 'body.tools'],
    [{ tool_choice: { type: 'web_search' } }, 'body.tool_choice'],
    [{ tools: [{ type: 'code_interpreter' }] }, 'body.tools.0.type'],
  ];
  for (const [extra, path] of cases) {
    const r = await h.req('POST', '/v1/responses', { key, body: { model: 'mid', input: 'x', ...(extra as object) } });
    expect([path, r.status, (r.body.details ?? []).map((d: { path: string }) => d.path)]).toEqual([path, 400, [path]]);
  }
  const noText = await h.req('POST', '/v1/responses', {
    key,
    body: { model: 'mid', input: [{ role: 'system', content: 'x' }], tools: [tool] },
  });
  expect([noText.status, noText.body.details?.[0]?.path]).toEqual([400, 'body.tools.0']);
  expect(fake.chats).toHaveLength(0);
  const echoed = await client.responses.create({
    model: 'mid',
    input: [
      { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'x' } },
      { role: 'user', content: 'again' },
    ] as never,
  });
  expect(echoed.status).toBe('completed');
  expect(fake.chats.at(-1)!.body.messages.slice(1)).toEqual([{ role: 'user', content: 'again' }]);
});
