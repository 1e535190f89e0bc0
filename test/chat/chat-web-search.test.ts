import OpenAI from 'openai';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai';
import { startHarness, type Harness } from '../helpers/harness';
import { contractErrors } from '../helpers/openai-contract';
import { answerResults, startSearchEngine } from '../helpers/search-engine';
import type { PageServer } from '../web/pages';

// web_search_options on /v1/chat/completions: a real local SearXNG-format engine, the fake OpenAI-compatible lane
// (which cites the first result it is given as a markdown link), the real database.

let h: Harness;
let fake: FakeOpenAI;
let engine: PageServer;
let key: string;
let client: OpenAI;
let searches: string[] = [];

const RESULTS = [
  {
    url: 'https://marmots.example/winter',
    title: 'Marmot winter',
    content: 'Alpine marmots hibernate for nine months.',
  },
  { url: 'https://marmots.example/colony', title: 'Marmot colonies', content: 'Colonies share body heat.' },
  { url: 'https://marmots.example/food', title: 'Marmot food', content: 'They eat grasses.' },
  { url: 'https://marmots.example/burrow', title: 'Marmot burrows', content: 'Burrows are lined with hay.' },
];

beforeAll(async () => {
  let configFile: string;
  ({ engine, configFile } = await startSearchEngine((query, res) => {
    searches.push(query);
    if (/engine down/.test(query)) return void res.writeHead(500).end('down');
    answerResults(res, RESULTS);
  }));
  fake = await startFakeOpenAI();
  h = await startHarness({ env: { SVC_CONFIG: configFile, OPENAI_BASE_URL: fake.url } });
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
  // The lane cites the first URL its system message lists, as a markdown link, or says it has none.
  fake.onRequest((r) => {
    const system = String(r.body?.messages?.[0]?.content ?? '');
    const url = /\[1\] .*\n(https:\S+)/.exec(system)?.[1];
    return {
      reply: url
        ? `Marmots hibernate for months ([Marmot winter](${url})), see also [elsewhere](https://other.example/).`
        : 'No sources.',
    };
  });
});

test('the last user message is searched; the lane gets the results; its links to them are url_citation annotations', async () => {
  const res = await client.chat.completions.create({
    model: 'mid',
    messages: [
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Hi' },
      { role: 'user', content: 'How do marmots survive winter?' },
    ],
    web_search_options: {
      search_context_size: 'low',
      user_location: { type: 'approximate', approximate: { country: 'CH' } },
    },
  });
  expect(contractErrors('CreateChatCompletionResponse', res)).toEqual([]);
  expect(searches).toEqual(['How do marmots survive winter?']);
  const system = String(fake.chats[0].body.messages[0].content);
  // The persona's system message first, then the results (low: 3 of the 4).
  expect(system).toMatch(/Web search results for "How do marmots survive winter\?"/);
  expect(system).toContain('[3] Marmot food');
  expect(system).not.toContain('Marmot burrows');
  const content = res.choices[0].message.content!;
  const [cite] = res.choices[0].message.annotations!;
  expect(res.choices[0].message.annotations).toHaveLength(1); // the link to a page not among the results is not one
  expect(cite).toEqual({
    type: 'url_citation',
    url_citation: expect.objectContaining({ url: RESULTS[0].url, title: 'Marmot winter' }),
  });
  expect(content.slice(cite.url_citation.start_index, cite.url_citation.end_index)).toBe(
    `[Marmot winter](${RESULTS[0].url})`,
  );
  expect((res as unknown as { meta: { web_search: unknown } }).meta.web_search).toEqual({
    query: 'How do marmots survive winter?',
    results: RESULTS.slice(0, 3).map(({ title, url }) => ({ title, url })),
  });
});

test('streamed: the annotations come with the last delta; a stored completion keeps them', async () => {
  const stream = await client.chat.completions.create({
    model: 'svc-oracle',
    messages: [{ role: 'user', content: 'Marmot facts?' }],
    web_search_options: {},
    stream: true,
    store: true,
  });
  const chunks: any[] = [];
  for await (const c of stream) chunks.push(c);
  const content = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
  const last = chunks.find((c) => c.choices[0]?.finish_reason);
  const [cite] = last.choices[0].delta.annotations;
  expect(content.slice(cite.url_citation.start_index, cite.url_citation.end_index)).toContain(RESULTS[0].url);
  const stored = await client.chat.completions.retrieve(chunks[0].id);
  expect(stored.choices[0].message.annotations).toEqual(last.choices[0].delta.annotations);
  // medium (the default): 5 results asked, the engine has 4.
  expect(String(fake.chats[0].body.messages[0].content)).toContain('[4] Marmot burrows');
});

test('failures: no user text 400, every engine failing 502, the utility lanes refuse it; no lane call', async () => {
  const none = await h.req('POST', '/v1/chat/completions', {
    key,
    body: { messages: [{ role: 'system', content: 'x' }], web_search_options: {} },
  });
  expect([none.status, none.body.details?.[0]?.path]).toEqual([400, 'body.web_search_options']);
  const down = await h.req('POST', '/v1/chat/completions', {
    key,
    body: { messages: [{ role: 'user', content: 'engine down' }], web_search_options: {} },
  });
  expect(down.status).toBe(502);
  const lane = await h.req('POST', '/v1/mid/chat/completions', {
    key,
    body: { messages: [{ role: 'user', content: 'x' }], web_search_options: {} },
  });
  expect([lane.status, lane.body.details?.[0]?.path]).toEqual([400, 'body.web_search_options']);
  expect(lane.body.details[0].message).toMatch(/POST \/v1\/chat\/completions/);
  const bad = await h.req('POST', '/v1/chat/completions', {
    key,
    body: { messages: [{ role: 'user', content: 'x' }], web_search_options: { search_context_size: 'huge' } },
  });
  expect([bad.status, bad.body.details?.[0]?.path]).toEqual([400, 'body.web_search_options.search_context_size']);
  expect(fake.chats).toHaveLength(0);
});

test('without engines configured: 503 saying how to configure them', async () => {
  const bare = await startHarness({ env: { OPENAI_BASE_URL: fake.url } });
  try {
    const k = (await bare.key(['runtime:chat'])).apiKey;
    const r = await bare.req('POST', '/v1/chat/completions', {
      key: k,
      body: { messages: [{ role: 'user', content: 'x' }], web_search_options: {} },
    });
    expect([r.status, r.body.error]).toEqual([503, expect.stringMatching(/search\.engines/)]);
  } finally {
    await bare.close();
  }
});
