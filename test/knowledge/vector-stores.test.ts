import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI, { toFile } from 'openai';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { sql } from 'slonik';
import { fakeEmbedding, startFakeOpenAI } from '../helpers/fake-openai';
import { startHarness } from '../helpers/harness';
import { makeDocx, makePdf } from './fixtures';
import { contractErrors } from '../helpers/openai-contract';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';

// OpenAI's Vector Stores API against the real database and a real worker's workflow: files of /v1/files read into
// stores (chunked by o200k tokens, embedded by a fake OpenAI-compatible provider), searched, filtered, batched.

let h: Harness;
let key: string;
let client: OpenAI;

withFakeUpstream({ scopes: ['runtime:chat'], worker: true }, (up) => {
  ({ h, key } = up);
  client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
});

const HANDBOOK = [
  '# Staff handbook',
  'Refunds are paid within fourteen days of a return, to the card that paid.',
  'The office opens at eight and closes at six; the code word for the vault is PERIWINKLE.',
].join('\n\n');
const RECIPES = '# Recipes\n\nBake the bread at two hundred degrees for forty minutes, then let it cool on a rack.';

async function upload(text: string | Buffer, name: string, c = client) {
  return c.files.create({ file: await toFile(Buffer.from(text), name), purpose: 'assistants' });
}
/** A store's files once none is in progress. */
const settled = (storeId: string, c = client) =>
  pollUntil(
    () => c.vectorStores.retrieve(storeId),
    (v) => v.status !== 'in_progress',
  );
const cosine = (a: number[], b: number[]) => a.reduce((n, x, i) => n + x * b[i], 0);

test('a store made with files (SDK): read, counted, searched with cosine scores; a binary file fails as unsupported', async () => {
  const handbook = await upload(HANDBOOK, 'handbook.md');
  const recipes = await upload(RECIPES, 'recipes.txt');
  const binary = await upload(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]), 'x.png');
  const store = await client.vectorStores.create({
    name: 'Company',
    file_ids: [handbook.id, recipes.id, binary.id],
    metadata: { owner: 'ops' },
    expires_after: { anchor: 'last_active_at', days: 7 },
  });
  expect(store.id).toMatch(/^vs_/);
  expect(contractErrors('VectorStoreObject', store)).toEqual([]);
  expect(store.file_counts.total).toBe(3);

  const done = await settled(store.id);
  expect(done).toMatchObject({
    status: 'completed',
    name: 'Company',
    metadata: { owner: 'ops' },
    file_counts: { completed: 2, failed: 1, in_progress: 0, cancelled: 0, total: 3 },
    expires_after: { anchor: 'last_active_at', days: 7 },
  });
  expect(done.usage_bytes).toBeGreaterThan(HANDBOOK.length);
  expect(done.expires_at).toBe(done.last_active_at! + 7 * 86_400);
  const failed = await client.vectorStores.files.retrieve(binary.id, { vector_store_id: store.id });
  expect(failed.status).toBe('failed');
  expect(failed.last_error).toMatchObject({ code: 'unsupported_file' });
  expect(contractErrors('VectorStoreFileObject', failed)).toEqual([]);
  const read = await client.vectorStores.files.retrieve(handbook.id, { vector_store_id: store.id });
  expect(read).toMatchObject({
    status: 'completed',
    last_error: null,
    chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 } },
  });

  const page = (
    await h.req('POST', `/v1/vector_stores/${store.id}/search`, { key, body: { query: 'vault code word' } })
  ).body;
  expect(contractErrors('VectorStoreSearchResultsPage', page)).toEqual([]);
  expect(page.search_query).toEqual(['vault code word']);
  // The SDK's pager reads the same results.
  const viaSdk = await client.vectorStores.search(store.id, { query: 'vault code word' });
  expect(viaSdk.data.map((d) => d.file_id)).toEqual(page.data.map((d: { file_id: string }) => d.file_id));
  const [first] = viaSdk.data;
  expect(first).toMatchObject({ file_id: handbook.id, filename: 'handbook.md', attributes: null });
  expect(first.content[0].text).toContain('PERIWINKLE');
  // The score is the cosine similarity of the provider's embeddings of the query and of the chunk.
  expect(first.score).toBeCloseTo(cosine(fakeEmbedding('vault code word'), fakeEmbedding(first.content[0].text)), 4);

  const content = await h.req('GET', `/v1/vector_stores/${store.id}/files/${handbook.id}/content`, { key });
  expect(content.body).toMatchObject({ object: 'vector_store.file_content.page', has_more: false, next_page: null });
  expect(content.body.data[0].text).toContain('Refunds are paid within fourteen days');

  // Removing a file from the store removes it from searches; the file itself stays in /v1/files.
  const removed = await client.vectorStores.files.delete(handbook.id, { vector_store_id: store.id });
  expect(removed).toEqual({ id: handbook.id, object: 'vector_store.file.deleted', deleted: true });
  const after = await client.vectorStores.search(store.id, { query: 'vault code word' });
  expect(after.data.map((d) => d.file_id)).not.toContain(handbook.id);
  expect((await client.files.retrieve(handbook.id)).id).toBe(handbook.id);
  // Deleting a file (OpenAI's rule) removes it from every store, with what they read from it.
  const other = await client.vectorStores.create({ name: 'other', file_ids: [recipes.id] });
  await settled(other.id);
  await client.files.delete(recipes.id);
  for (const id of [store.id, other.id]) {
    const left = await client.vectorStores.files.list(id);
    expect(left.data.map((f) => f.id)).not.toContain(recipes.id);
    expect((await client.vectorStores.search(id, { query: 'bread' })).data).toEqual([]);
  }
  expect(await client.vectorStores.delete(store.id)).toEqual({
    id: store.id,
    object: 'vector_store.deleted',
    deleted: true,
  });
  expect((await h.req('GET', `/v1/vector_stores/${store.id}`, { key })).status).toBe(404);
});

test('static chunking: windows of at most max tokens, overlapping, the whole text covered', async () => {
  const words = Array.from({ length: 600 }, (_, i) => `word${i}`).join(' ');
  const f = await upload(words, 'long.txt');
  const store = await client.vectorStores.create({ name: 'chunks' });
  const vsf = await client.vectorStores.files.createAndPoll(store.id, {
    file_id: f.id,
    chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 100, chunk_overlap_tokens: 20 } },
  });
  expect(vsf.status).toBe('completed');
  expect(vsf.chunking_strategy).toEqual({
    type: 'static',
    static: { max_chunk_size_tokens: 100, chunk_overlap_tokens: 20 },
  });
  const total = encode(words).length;
  const { rows } = await h.db.query(sql.unsafe`
    SELECT text FROM vector_store_chunks WHERE vector_store_id = ${store.id} ORDER BY ord`);
  const texts = rows.map((r) => (r as { text: string }).text);
  expect(texts.length).toBe(Math.ceil((total - 100) / 80) + 1);
  for (const t of texts) expect(encode(t).length).toBeLessThanOrEqual(100);
  expect(texts[0].startsWith('word0 ')).toBe(true);
  expect(texts.at(-1)!.endsWith('word599')).toBe(true);
  // Consecutive windows overlap.
  const lastOfFirst = texts[0].split(' ').at(-2)!;
  expect(texts[1]).toContain(lastOfFirst);

  // Overlap over half the window is refused, naming the field.
  const bad = await h.req('POST', `/v1/vector_stores/${store.id}/files`, {
    key,
    body: {
      file_id: f.id,
      chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 100, chunk_overlap_tokens: 60 } },
    },
  });
  expect(bad.status).toBe(400);
  expect(JSON.stringify(bad.body.details)).toContain('chunk_overlap_tokens');
});

test('a long file is read in groups of chunks, every one embedded; a file added again mid-read ends with its new chunks only', async () => {
  const words = Array.from({ length: 12_000 }, (_, i) => `w${i}`).join(' ');
  const tokens = encode(words).length;
  const f = await upload(words, 'long.txt');
  const store = await client.vectorStores.create({ name: 'long' });
  const staticChunks = { type: 'static' as const, static: { max_chunk_size_tokens: 100, chunk_overlap_tokens: 0 } };
  const first = await client.vectorStores.files.createAndPoll(store.id, {
    file_id: f.id,
    chunking_strategy: staticChunks,
  });
  expect(first.status).toBe('completed');
  const rows = async () =>
    (
      await h.db.query(sql.unsafe`
        SELECT ord, generation, embedding IS NOT NULL AS embedded FROM vector_store_chunks
        WHERE vector_store_id = ${store.id} ORDER BY ord`)
    ).rows as Array<{ ord: number; generation: string; embedded: boolean }>;
  const read = await rows();
  expect(read.length).toBe(Math.ceil(tokens / 100));
  expect(read.length).toBeGreaterThan(256); // more than one group
  expect(read.map((r) => r.ord)).toEqual(read.map((_r, i) => i));
  expect(read.every((r) => r.embedded)).toBe(true);
  const found = await client.vectorStores.search(store.id, { query: 'w11999' });
  expect(found.data[0].content[0].text).toContain('w11999');

  // Added twice at once: the second add's generation wins, and only its chunks are left.
  await client.vectorStores.files.create(store.id, { file_id: f.id, chunking_strategy: staticChunks });
  const again = await client.vectorStores.files.createAndPoll(store.id, { file_id: f.id });
  expect(again.status).toBe('completed');
  await new Promise((r) => setTimeout(r, 1500)); // the first add's reading, if it still ran, has ended
  const after = await rows();
  expect(new Set(after.map((r) => r.generation)).size).toBe(1);
  expect(after.length).toBe(Math.ceil((tokens - 800) / 400) + 1);
  const hits = await client.vectorStores.search(store.id, { query: 'w5000', max_num_results: 50 });
  expect(hits.data.length).toBeGreaterThan(0);
});

test('attributes filter searches (eq, gt, in, nin, and/or); updating them takes effect at once', async () => {
  const store = await client.vectorStores.create({ name: 'filtered' });
  const attrs: Array<Record<string, string | number | boolean>> = [
    { team: 'support', year: 2023, public: true },
    { team: 'sales', year: 2024, public: false },
    { team: 'support', year: 2025 },
  ];
  const files = await Promise.all(
    attrs.map(async (attributes, i) => {
      const f = await upload(`Quarterly meeting notes number ${i}: the budget was discussed.`, `notes${i}.txt`);
      await client.vectorStores.files.createAndPoll(store.id, { file_id: f.id, attributes });
      return f.id;
    }),
  );
  const found = async (filters: unknown) => {
    const r = await h.req('POST', `/v1/vector_stores/${store.id}/search`, {
      key,
      body: { query: 'budget meeting', filters },
    });
    expect(r.status).toBe(200);
    return (r.body.data as Array<{ file_id: string }>).map((d) => files.indexOf(d.file_id)).sort();
  };
  expect(await found(undefined)).toEqual([0, 1, 2]);
  expect(await found({ type: 'eq', key: 'team', value: 'support' })).toEqual([0, 2]);
  expect(await found({ type: 'gt', key: 'year', value: 2023 })).toEqual([1, 2]);
  expect(await found({ type: 'in', key: 'year', value: [2023, 2025] })).toEqual([0, 2]);
  expect(await found({ type: 'nin', key: 'team', value: ['sales'] })).toEqual([0, 2]);
  expect(await found({ type: 'ne', key: 'public', value: true })).toEqual([1, 2]);
  expect(
    await found({
      type: 'or',
      filters: [
        { type: 'eq', key: 'team', value: 'sales' },
        {
          type: 'and',
          filters: [
            { type: 'eq', key: 'team', value: 'support' },
            { type: 'gte', key: 'year', value: 2025 },
          ],
        },
      ],
    }),
  ).toEqual([1, 2]);
  const updated = await client.vectorStores.files.update(files[1], {
    vector_store_id: store.id,
    attributes: { team: 'support' },
  });
  expect(updated.attributes).toEqual({ team: 'support' });
  expect(await found({ type: 'eq', key: 'team', value: 'support' })).toEqual([0, 1, 2]);
  // A list with eq, a number compared greater than a boolean: 400 naming the value.
  const bad = await h.req('POST', `/v1/vector_stores/${store.id}/search`, {
    key,
    body: { query: 'x', filters: { type: 'eq', key: 'team', value: ['a'] } },
  });
  expect(bad.status).toBe(400);
  expect(JSON.stringify(bad.body.details)).toContain('filters');
  // score_threshold 1 leaves nothing; ranker none orders by score.
  const strict = await client.vectorStores.search(store.id, {
    query: 'budget meeting',
    ranking_options: { score_threshold: 1 },
  });
  expect(strict.data).toEqual([]);
  const byScore = await client.vectorStores.search(store.id, {
    query: 'budget meeting',
    ranking_options: { ranker: 'none' },
  });
  const scores = byScore.data.map((d) => d.score);
  expect(scores).toEqual([...scores].sort((a, b) => b - a));
});

test('file batches: read together, listed, counted; a cancelled batch leaves no file in progress and none read later', async () => {
  const store = await client.vectorStores.create({ name: 'batches' });
  const ids = await Promise.all([0, 1, 2].map(async (i) => (await upload(`Batch document ${i}.`, `b${i}.txt`)).id));
  const batch = await client.vectorStores.fileBatches.createAndPoll(store.id, {
    file_ids: ids,
    attributes: { source: 'batch' },
  });
  expect(batch.id).toMatch(/^vsfb_/);
  expect(contractErrors('VectorStoreFileBatchObject', batch)).toEqual([]);
  expect(batch).toMatchObject({ status: 'completed', file_counts: { completed: 3, total: 3 } });
  const listed = await client.vectorStores.fileBatches.listFiles(batch.id, { vector_store_id: store.id });
  expect(listed.data.map((f) => f.id).sort()).toEqual([...ids].sort());
  expect(listed.data.every((f) => f.attributes?.source === 'batch')).toBe(true);

  // Per-file settings; one unknown file refuses the whole batch (404 naming it) and adds nothing.
  const unknown = await h.req('POST', `/v1/vector_stores/${store.id}/file_batches`, {
    key,
    body: { files: [{ file_id: ids[0] }, { file_id: 'file-doesnotexist' }] },
  });
  expect(unknown.status).toBe(404);
  expect(unknown.body.error).toContain('file-doesnotexist');
  expect((await client.vectorStores.retrieve(store.id)).file_counts.total).toBe(3);

  const many = await Promise.all(
    Array.from({ length: 12 }, async (_, i) => (await upload(`Cancel me ${i}. `.repeat(200), `c${i}.txt`)).id),
  );
  const running = await client.vectorStores.fileBatches.create(store.id, { file_ids: many });
  const cancelled = await client.vectorStores.fileBatches.cancel(running.id, { vector_store_id: store.id });
  expect(cancelled.status).toBe('cancelled');
  expect(cancelled.file_counts.in_progress).toBe(0);
  expect(cancelled.file_counts.cancelled + cancelled.file_counts.completed).toBe(12);
  // The workflow ends without turning a cancelled file into a completed one.
  await pollUntil(
    async (): Promise<string> => (await h.client.workflow.getHandle(running.id).describe()).status.name,
    (s) => s !== 'RUNNING',
  );
  const later = await client.vectorStores.fileBatches.retrieve(running.id, { vector_store_id: store.id });
  expect(later.file_counts).toEqual(cancelled.file_counts);
});

test('a batch of many files continues as new when Temporal suggests it, and reads every file once', async () => {
  const store = await client.vectorStores.create({ name: 'many' });
  const ids = await Promise.all(
    Array.from({ length: 40 }, async (_, i) => (await upload(`Note ${i}: tide tables.`, `n${i}.txt`)).id),
  );
  const batch = await client.vectorStores.fileBatches.createAndPoll(store.id, { file_ids: ids });
  expect(batch.file_counts).toMatchObject({ completed: 40, total: 40, failed: 0 });
  // The test server suggests continue-as-new after 150 events: the run that ended was started by an earlier one.
  const handle = h.client.workflow.getHandle(batch.id);
  const history = await handle.fetchHistory();
  expect(history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId).toBeTruthy();
  expect(await handle.result()).toMatchObject({ completed: 40, failed: 0 });
  const { rows } = await h.db.query(sql.unsafe`
    SELECT count(DISTINCT file_id)::int AS files, count(*)::int AS chunks FROM vector_store_chunks
    WHERE vector_store_id = ${store.id}`);
  expect(rows[0]).toEqual({ files: 40, chunks: 40 });
});

test('lists page with after; another tenant’s store, files and batches are 404; bad ids 400; expired stores refuse searches', async () => {
  const a = await client.vectorStores.create({ name: 'first' });
  const b = await client.vectorStores.create({ name: 'second' });
  const page1 = await h.req('GET', '/v1/vector_stores?limit=1', { key });
  expect(page1.body).toMatchObject({ object: 'list', first_id: b.id, has_more: true });
  const page2 = await h.req('GET', `/v1/vector_stores?limit=1&after=${b.id}`, { key });
  expect(page2.body.data[0].id).toBe(a.id);
  expect((await h.req('GET', '/v1/vector_stores?after=vs_unknown', { key })).status).toBe(400);

  const other = (await h.key(['runtime:chat'])).apiKey;
  for (const [method, path, body] of [
    ['GET', `/v1/vector_stores/${a.id}`],
    ['POST', `/v1/vector_stores/${a.id}`, { name: 'x' }],
    ['DELETE', `/v1/vector_stores/${a.id}`],
    ['POST', `/v1/vector_stores/${a.id}/search`, { query: 'x' }],
    ['GET', `/v1/vector_stores/${a.id}/files`],
  ] as const) {
    const r = await h.req(method, path, { key: other, body });
    expect([path, r.status]).toEqual([path, 404]);
  }
  // Another tenant's file cannot be added to one's own store.
  const mine = await upload('Private text.', 'mine.txt');
  const otherClient = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: other, maxRetries: 0 });
  const theirs = await otherClient.vectorStores.create({ name: 'theirs' });
  const stolen = await h.req('POST', `/v1/vector_stores/${theirs.id}/files`, {
    key: other,
    body: { file_id: mine.id },
  });
  expect(stolen.status).toBe(404);
  expect(stolen.body.details[0].path).toBe('body.file_id');
  // A store made with an unknown file is refused and not left behind.
  const before = (await h.req('GET', '/v1/vector_stores', { key })).body.data.length;
  const refused = await h.req('POST', '/v1/vector_stores', { key, body: { name: 'x', file_ids: ['file-nope'] } });
  expect(refused.status).toBe(404);
  expect((await h.req('GET', '/v1/vector_stores', { key })).body.data.length).toBe(before);
  expect((await h.req('GET', '/v1/vector_stores/not-a-store', { key })).status).toBe(400);
  // A retried create with the same Idempotency-Key gets the same store, not a second one.
  const headers = { 'idempotency-key': 'vs-create-1' };
  const once = await h.req('POST', '/v1/vector_stores', { key, body: { name: 'once' }, headers });
  const again = await h.req('POST', '/v1/vector_stores', { key, body: { name: 'once' }, headers });
  expect(again.body.id).toBe(once.body.id);
  expect((await h.req('GET', '/v1/vector_stores', { key })).body.data.length).toBe(before + 1);

  // Modify: name, metadata replaced, expiry set; once expired, searching is 400 and the status says so.
  const changed = await client.vectorStores.update(a.id, {
    name: 'renamed',
    metadata: { k: 'v' },
    expires_after: { anchor: 'last_active_at', days: 1 },
  });
  expect(changed).toMatchObject({ name: 'renamed', metadata: { k: 'v' }, expires_after: { days: 1 } });
  await h.db.query(sql.unsafe`UPDATE vector_stores SET last_active_at = now() - interval '2 days' WHERE id = ${a.id}`);
  expect((await client.vectorStores.retrieve(a.id)).status).toBe('expired');
  const expired = await h.req('POST', `/v1/vector_stores/${a.id}/search`, { key, body: { query: 'x' } });
  expect(expired.status).toBe(400);
  expect(expired.body.error).toMatch(/expired/);
  expect(expired.body.details).toEqual([{ path: 'path.id', message: 'vector store expired' }]);
  const cleared = await h.req('POST', `/v1/vector_stores/${a.id}`, { key, body: { expires_after: null } });
  expect(cleared.body).toMatchObject({ status: 'completed', expires_at: null });
  expect(cleared.body).not.toHaveProperty('expires_after');
});

test('PDF and DOCX files are read; with the embeddings provider failing, files are read for full text; the tenant limit', async () => {
  const failing = await startFakeOpenAI({ embeddings: { status: 500 } });
  const other = await startHarness({
    worker: true,
    env: { OPENAI_BASE_URL: failing.url, SVC_VECTOR_STORES_TENANT_LIMIT: '4096' },
  });
  try {
    const c = new OpenAI({
      baseURL: `${other.url}/v1`,
      apiKey: (await other.key(['runtime:chat'])).apiKey,
      maxRetries: 0,
    });
    const pdf = await upload(await makePdf([['Quarterly revenue grew by eleven percent.']], 'Q3'), 'q3.pdf', c);
    const docx = await upload(
      await makeDocx('Keeper', ['The lighthouse keeper rows out on Tuesdays.']),
      'keeper.docx',
      c,
    );
    const store = await c.vectorStores.create({ name: 'documents', file_ids: [pdf.id, docx.id] });
    const done = await settled(store.id, c);
    expect(done.file_counts).toMatchObject({ completed: 2, failed: 0 });
    const { rows } = await other.db.query(sql.unsafe`
      SELECT count(*)::int AS n, count(embedding)::int AS vectors FROM vector_store_chunks WHERE vector_store_id = ${store.id}`);
    expect(rows[0]).toEqual({ n: 2, vectors: 0 });
    const calls = failing.requests.length;
    const found = await c.vectorStores.search(store.id, { query: 'lighthouse keeper' });
    expect(found.data.map((d) => d.file_id)).toEqual([docx.id]);
    // No chunk has a vector: the query is not sent to the provider to be embedded.
    expect(failing.requests.length).toBe(calls);
    // Full-text scores: ts_rank_cd normalised into 0-1.
    expect(found.data[0].score).toBeGreaterThan(0);
    expect(found.data[0].score).toBeLessThan(1);
    const revenue = await c.vectorStores.search(store.id, { query: 'revenue growth' });
    expect(revenue.data[0].content[0].text).toContain('eleven percent');

    // Once the tenant's stores hold SVC_VECTOR_STORES_TENANT_LIMIT, new files are refused (a file being read finishes).
    const big = await upload('Harbour notes. '.repeat(400), 'big.txt', c);
    expect((await c.vectorStores.files.createAndPoll(store.id, { file_id: big.id })).status).toBe('completed');
    const k = (await other.key(['runtime:chat'])).apiKey;
    const full = await other.req('POST', `/v1/vector_stores/${store.id}/files`, {
      key: (c as unknown as { apiKey: string }).apiKey,
      body: { file_id: pdf.id },
    });
    expect([full.status, full.body.error]).toEqual([413, expect.stringContaining('SVC_VECTOR_STORES_TENANT_LIMIT')]);
    const stores = (await c.vectorStores.list()).data.length;
    await expect(c.vectorStores.create({ name: 'more', file_ids: [docx.id] })).rejects.toMatchObject({ status: 413 });
    expect((await c.vectorStores.list()).data.length).toBe(stores);
    // Another tenant has its own allowance.
    const own = await upload(
      'Other tenant.',
      'o.txt',
      new OpenAI({ baseURL: `${other.url}/v1`, apiKey: k, maxRetries: 0 }),
    );
    const ownStore = await other.req('POST', '/v1/vector_stores', { key: k, body: { file_ids: [own.id] } });
    expect(ownStore.status).toBe(200);
  } finally {
    await other.close();
    await failing.close();
  }
});

test('MCP: vector_store_search searches several stores as the route does; a foreign store is a tool error naming it', async () => {
  const a = await client.vectorStores.create({ name: 'a', file_ids: [(await upload(HANDBOOK, 'handbook.md')).id] });
  const b = await client.vectorStores.create({ name: 'b', file_ids: [(await upload(RECIPES, 'recipes.txt')).id] });
  await settled(a.id);
  await settled(b.id);
  const mcp = new Client({ name: 'svc-test', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${h.url}/v1/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  try {
    const listed = await mcp.listTools();
    expect(listed.tools.map((t) => t.name)).toContain('vector_store_search');
    const r = await mcp.callTool({
      name: 'vector_store_search',
      arguments: { vector_store_ids: [a.id, b.id], query: 'bake bread vault', max_num_results: 5 },
    });
    expect(r.isError).toBeFalsy();
    const page = r.structuredContent as { object: string; data: Array<{ filename: string }> };
    expect(page.object).toBe('vector_store.search_results.page');
    expect(new Set(page.data.map((d) => d.filename))).toEqual(new Set(['handbook.md', 'recipes.txt']));
    const theirs = await new OpenAI({
      baseURL: `${h.url}/v1`,
      apiKey: (await h.key(['runtime:chat'])).apiKey,
      maxRetries: 0,
    }).vectorStores.create({ name: 'theirs' });
    const refused = await mcp.callTool({
      name: 'vector_store_search',
      arguments: { vector_store_ids: [a.id, theirs.id], query: 'x' },
    });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('vector_store_ids.1');
  } finally {
    await mcp.close();
  }
});
