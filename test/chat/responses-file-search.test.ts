import OpenAI, { toFile } from 'openai';
import { sql } from 'slonik';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { contractErrors, streamEventErrors } from '../helpers/openai-contract';
import { withFakeUpstream } from '../helpers/fake-upstream';
import { fields, type Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';

// The Responses API's file_search tool over the tenant's vector stores: a real worker reads the files, the real
// database searches them, the fake OpenAI-compatible lane answers citing the first result it is given as [1].

let h: Harness;
let fake: FakeOpenAI;
let key: string;
let client: OpenAI;
let storeId: string;
let handbookId: string;

const HANDBOOK = [
  '# Staff handbook',
  'Refunds are paid within fourteen days of a return.',
  'The code word for the vault is PERIWINKLE.',
].join('\n\n');

withFakeUpstream({ scopes: ['runtime:chat'], worker: true }, (up) => {
  ({ fake, h, key } = up);
  client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
});
beforeAll(async () => {
  const f = await client.files.create({
    file: await toFile(Buffer.from(HANDBOOK), 'handbook.md'),
    purpose: 'assistants',
  });
  handbookId = f.id;
  const store = await client.vectorStores.create({ name: 'handbook', file_ids: [f.id] });
  storeId = store.id;
  await pollUntil(
    () => client.vectorStores.retrieve(storeId),
    (v) => v.file_counts.completed === 1,
  );
});
beforeEach(() => {
  fake.reset();
  // The lane cites result 1 when its system message lists file search results, and a number it was not given.
  fake.onRequest((r) => {
    const system = String(r.body?.messages?.[0]?.content ?? '');
    return {
      reply: /File search results[\s\S]*\n\[1\] handbook\.md\n/.test(system)
        ? 'The vault word is PERIWINKLE [1]. Not [7].'
        : 'Nothing found.',
    };
  });
});

const tool = () => ({ type: 'file_search' as const, vector_store_ids: [storeId] });

test('JSON: the store is searched for the last user message, the lane gets the results, its [1] is a file_citation', async () => {
  const res = await client.responses.create({
    model: 'mid',
    input: [
      { role: 'user', content: 'Hello' },
      { role: 'user', content: 'What is the vault code word?' },
    ],
    tools: [tool()],
    include: ['file_search_call.results'],
  });
  expect(contractErrors('Response', res)).toEqual([]);
  const [call, message] = res.output as any[];
  expect(call).toMatchObject({
    type: 'file_search_call',
    status: 'completed',
    queries: ['What is the vault code word?'],
  });
  expect(call.id).toMatch(/^fs_/);
  expect(call.results[0]).toMatchObject({ file_id: handbookId, filename: 'handbook.md', attributes: null });
  expect(call.results[0].text).toContain('PERIWINKLE');
  const text = message.content[0].text as string;
  expect(text).toBe('The vault word is PERIWINKLE [1]. Not [7].');
  // [7] names no result: only [1] is an annotation, at its place in the text.
  expect(message.content[0].annotations).toEqual([
    { type: 'file_citation', file_id: handbookId, filename: 'handbook.md', index: text.indexOf('[1]') },
  ]);
  expect(res.tools).toEqual([
    {
      type: 'file_search',
      vector_store_ids: [storeId],
      max_num_results: 10,
      ranking_options: { ranker: 'auto', score_threshold: 0 },
      filters: null,
    },
  ]);
  const system = String(fake.chats.at(-1)!.body.messages[0].content);
  expect(system).toMatch(/File search results for "What is the vault code word\?"/);
  expect(system).toContain('PERIWINKLE');
  // No function tools reach the lane: file_search is the service's own.
  expect(fake.chats.at(-1)!.body.tools).toBeUndefined();

  // Without include, the call's results are not shown; a filter that matches nothing gives the lane no results.
  const plain = await client.responses.create({ model: 'mid', input: 'vault code word?', tools: [tool()] });
  expect((plain.output[0] as any).results).toBeNull();
  const none = await client.responses.create({
    model: 'mid',
    input: 'vault code word?',
    tools: [{ ...tool(), filters: { type: 'eq', key: 'team', value: 'nobody' } }],
  });
  expect(none.output_text).toBe('Nothing found.');
  expect(String(fake.chats.at(-1)!.body.messages[0].content)).toContain('(no results)');

  // The response continues: the file search is left out of the history, the answer is in it.
  const next = await client.responses.create({ model: 'mid', input: 'Thanks', previous_response_id: res.id });
  expect(next.status).toBe('completed');
  const history = fake.chats.at(-1)!.body.messages.slice(1);
  expect(history.map((m: { role: string }) => m.role)).toEqual(['user', 'user', 'assistant', 'user']);
  // A client that sends the call back as input gets it taken and left out.
  const echoed = await client.responses.create({
    model: 'mid',
    input: [call, { role: 'user', content: 'again' }] as any,
  });
  expect(echoed.status).toBe('completed');
});

test('stream: the file search events come first, then the answer with its annotation; every event in the contract', async () => {
  const stream = await client.responses.create({
    model: 'mid',
    input: 'What is the vault code word?',
    tools: [tool()],
    stream: true,
  });
  const events: any[] = [];
  for await (const e of stream) events.push(e);
  for (const e of events) expect(streamEventErrors(e)).toEqual([]);
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_e, i) => i));
  expect(events.slice(0, 7).map((e) => e.type)).toEqual([
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.file_search_call.in_progress',
    'response.file_search_call.searching',
    'response.file_search_call.completed',
    'response.output_item.done',
  ]);
  expect(events[2].item).toMatchObject({ type: 'file_search_call', status: 'in_progress' });
  const added = events.find((e) => e.type === 'response.output_text.annotation.added');
  expect(added).toMatchObject({ output_index: 1, annotation_index: 0, annotation: { file_id: handbookId } });
  const done = events.at(-1);
  expect(done.type).toBe('response.completed');
  expect(done.response.output.map((o: { type: string }) => o.type)).toEqual(['file_search_call', 'message']);
  expect(done.response.output[1].content[0].annotations).toHaveLength(1);
  // The stored response is the completed one.
  const stored = await client.responses.retrieve(done.response.id);
  expect(stored.output).toEqual(done.response.output);
});

test('background: the worker’s answer starts with the search made when it was queued', async () => {
  const queued = await client.responses.create({
    model: 'mid',
    input: 'What is the vault code word?',
    tools: [tool()],
    background: true,
  });
  const ended = await pollUntil(
    () => client.responses.retrieve(queued.id),
    (r) => r.status !== 'queued' && r.status !== 'in_progress',
  );
  expect(ended.status).toBe('completed');
  expect(ended.output.map((o) => o.type)).toEqual(['file_search_call', 'message']);
  const part = (ended.output[1] as any).content[0];
  expect(part.annotations).toEqual([
    { type: 'file_citation', file_id: handbookId, filename: 'handbook.md', index: part.text.indexOf('[1]') },
  ]);
});

test('input_tokens does not search: a count with file_search counts the request without results', async () => {
  const embeddings = () => fake.requests.filter((r) => r.path.endsWith('/embeddings')).length;
  const before = embeddings();
  const withTool = await client.responses.inputTokens.count({
    model: 'mid',
    input: 'What is the vault code word?',
    tools: [tool()],
  });
  const without = await client.responses.inputTokens.count({ model: 'mid', input: 'What is the vault code word?' });
  expect(withTool.input_tokens).toBe(without.input_tokens);
  expect(embeddings()).toBe(before);
});

test('a batch line with file_search: searched when the batch is made, its output starts with the search and cites it', async () => {
  const line = {
    custom_id: 'fs-1',
    method: 'POST',
    url: '/v1/responses',
    body: { model: 'mid', input: 'What is the vault code word?', tools: [tool()] },
  };
  const input = await client.files.create({
    file: await toFile(Buffer.from(`${JSON.stringify(line)}\n`), 'lines.jsonl'),
    purpose: 'batch',
  });
  const batch = await client.batches.create({
    input_file_id: input.id,
    endpoint: '/v1/responses',
    completion_window: '24h',
  });
  const ended = await pollUntil(
    () => client.batches.retrieve(batch.id),
    (b) => b.status === 'completed' || b.status === 'failed',
  );
  expect(ended.status).toBe('completed');
  const out = JSON.parse((await (await client.files.content(ended.output_file_id!)).text()).trim());
  const body = out.response.body;
  expect(body.output.map((o: { type: string }) => o.type)).toEqual(['file_search_call', 'message']);
  expect(body.output[1].content[0].annotations).toEqual([
    expect.objectContaining({ type: 'file_citation', file_id: handbookId }),
  ]);
});

test('refusals name the field and call no lane: unknown, foreign or expired stores, a choice without the tool, two tools', async () => {
  const other = (await h.key(['runtime:chat'])).apiKey;
  const otherClient = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: other, maxRetries: 0 });
  const theirs = await otherClient.vectorStores.create({ name: 'theirs' });
  const expired = await client.vectorStores.create({
    name: 'old',
    expires_after: { anchor: 'last_active_at', days: 1 },
  });
  await h.db.query(
    sql.unsafe`UPDATE vector_stores SET last_active_at = now() - interval '3 days' WHERE id = ${expired.id}`,
  );
  const cases: Array<[unknown, number, string]> = [
    [
      { tools: [{ type: 'file_search', vector_store_ids: [storeId, 'vs_unknown'] }] },
      404,
      'body.tools.0.vector_store_ids.1',
    ],
    [{ tools: [{ type: 'file_search', vector_store_ids: [theirs.id] }] }, 404, 'body.tools.0.vector_store_ids.0'],
    [{ tools: [{ type: 'file_search', vector_store_ids: [expired.id] }] }, 400, 'body.tools.0.vector_store_ids.0'],
    [{ tools: [{ type: 'file_search', vector_store_ids: ['not-a-store'] }] }, 400, 'body.tools.0.vector_store_ids.0'],
    [{ tool_choice: { type: 'file_search' } }, 400, 'body.tool_choice'],
    [{ tools: [tool(), tool()] }, 400, 'body.tools'],
    [{ tools: [{ type: 'code_interpreter' }] }, 400, 'body.tools.0.type'],
    [{ tools: [tool()], tool_choice: { type: 'function', name: 'missing' } }, 400, 'body.tool_choice'],
  ];
  for (const [extra, status, path] of cases) {
    const r = await h.req('POST', '/v1/responses', {
      key,
      body: { model: 'mid', input: 'vault?', ...(extra as object) },
    });
    expect([path, r.status, fields(r)]).toEqual([path, status, [path]]);
  }
  expect(fake.chats).toHaveLength(0);
  // `required` with only file_search is met by the search; a choice of file_search likewise.
  for (const tool_choice of ['required', { type: 'file_search' }]) {
    const r = await h.req('POST', '/v1/responses', {
      key,
      body: { model: 'mid', input: 'What is the vault code word?', tools: [tool()], tool_choice },
    });
    expect(r.status).toBe(200);
    expect(r.body.output[0].type).toBe('file_search_call');
  }
});
