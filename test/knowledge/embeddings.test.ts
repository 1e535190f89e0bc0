import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'slonik';
import { z } from 'zod';
import { embedTexts } from '../../activities/knowledge/embeddings';
import { fuseRankings } from '../../activities/knowledge/fusion';
import { knowledgeMode } from '../../activities/knowledge/mode';
import { ftsCandidates } from '../../activities/store/chunks';
import { parseConfig } from '../../schema/config';
import { fakeEmbedding, startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai';
import { startHarness, type Harness } from '../helpers/harness';
import { CORPUS } from './corpus';

/**
 * The hybrid-search path on the PostgreSQL server (no pgvector there): the embeddings client
 * against a real OpenAI-compatible /v1/embeddings, the mode check, and the arithmetic of
 * reciprocal rank fusion. The vector SQL itself runs for real on PGlite's pgvector in
 * vector-search.test.ts.
 */
let fake: FakeOpenAI;
let h: Harness;
let key: string;
let tenantId: string;
const docIds: string[] = [];

beforeAll(async () => {
  // Reverse order: the client must place vectors by `index`, not by position.
  fake = await startFakeOpenAI({ apiKey: 'sk-embed', embeddings: { reverse: true } });
  h = await startHarness({
    env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-embed', SVC_EMBEDDING_MODEL: 'emb-test' },
  });
  const k = await h.key(['runtime:chat', 'runtime:records']);
  key = k.apiKey;
  tenantId = k.tenantId;
  for (const d of CORPUS) {
    const r = await h.req('POST', '/v1/ingest', { key, body: { text: d.text, title: d.title, kind: 'knowledge' } });
    expect(r.status).toBe(201);
    docIds.push(r.body.document.id);
  }
});
afterAll(async () => {
  await h?.close();
  await fake?.close();
});

const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i], 0);

test('the client sends OpenAI embedding requests in batches of 64 and keeps vectors in input order', async () => {
  fake.reset();
  const texts = Array.from(
    { length: 130 },
    (_, i) => `document ${i} about ${i % 2 ? 'travel receipts' : 'espresso machines'}`,
  );
  const vectors = await embedTexts(h.config, texts);
  expect(fake.embeddingRequests.map((r) => r.body.input.length)).toEqual([64, 64, 2]);
  for (const r of fake.embeddingRequests) {
    expect(r.path).toBe('/v1/embeddings');
    expect(r.body.model).toBe('emb-test');
    expect(r.headers.authorization).toBe('Bearer sk-embed');
    expect(r.headers['content-type']).toMatch(/^application\/json/);
  }
  expect(fake.embeddingRequests.flatMap((r) => r.body.input)).toEqual(texts);
  expect(vectors).toEqual(texts.map((t) => fakeEmbedding(t)));
  // Texts sharing words are nearer than unrelated ones (what retrieval relies on).
  const [q, near, far] = await embedTexts(h.config, [
    'descale the espresso machine',
    'espresso machine descaling every two weeks',
    'parental leave policy',
  ]);
  expect(cosine(q, near)).toBeGreaterThan(cosine(q, far));
});

test('the client maps a missing provider, a provider without embeddings and a refused key to clear errors', async () => {
  await expect(embedTexts(parseConfig({ DATABASE_URL: h.dbUrl }), ['x'])).rejects.toMatchObject({
    code: 'service_unavailable',
  });
  const chatOnly = await startFakeOpenAI({ embeddings: { enabled: false } });
  try {
    await expect(
      embedTexts(parseConfig({ DATABASE_URL: h.dbUrl, OPENAI_BASE_URL: chatOnly.url }), ['x']),
    ).rejects.toMatchObject({ code: 'upstream_error', message: expect.stringContaining('HTTP 404') });
  } finally {
    await chatOnly.close();
  }
  // A wrong key: the fake answers 401 before routing.
  await expect(
    embedTexts(parseConfig({ DATABASE_URL: h.dbUrl, OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'wrong' }), ['x']),
  ).rejects.toMatchObject({ code: 'upstream_error', message: expect.stringContaining('HTTP 401') });
});

test('odd answers from the embeddings provider are its error (a null item was a TypeError), never a vector', async () => {
  const bodies = [
    '{"data":[null]}',
    '{"data":[7]}',
    '{"data":[{"index":0,"embedding":[]}]}',
    '{"data":[{"index":0,"embedding":["1"]}]}',
    '{"data":[{"index":0}]}',
    '{"data":{}}',
    'null',
    'not json',
  ];
  let body = '';
  const server = http.createServer((_q, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const config = parseConfig({
    DATABASE_URL: h.dbUrl,
    OPENAI_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
  });
  try {
    for (body of bodies)
      await expect(embedTexts(config, ['x'])).rejects.toMatchObject({
        code: 'upstream_error',
        message: expect.stringMatching(/^The embeddings provider sent a malformed (answer|vector)\.$/),
      });
  } finally {
    server.close();
  }
});

test('the mode check sees working embeddings; without pgvector search stays full-text', async () => {
  expect(await knowledgeMode(h.db, h.config)).toEqual({
    search_mode: 'fts',
    vector_extension: false,
    embeddings: true,
  });
  expect((await h.req('GET', '/v1/health')).body.knowledge).toEqual({
    search_mode: 'fts',
    vector_extension: false,
    embeddings: true,
  });
  const r = await h.req('GET', `/v1/enterprise/knowledge/search?q=${encodeURIComponent(CORPUS[0].query)}&limit=3`, {
    key,
  });
  expect(r.body.mode).toBe('fts');
});

test('reciprocal rank fusion of real full-text results and an embedding ranking keeps both recalls', async () => {
  const chunks = await h.db.any(sql.type(z.object({ id: z.string(), document_id: z.string(), text: z.string() }))`
    SELECT id, document_id, text FROM chunks WHERE tenant_id = ${tenantId} ORDER BY id`);
  const chunkVectors = await embedTexts(
    h.config,
    chunks.map((c) => c.text),
  );
  const docOf = new Map(chunks.map((c) => [c.id, c.document_id]));
  let vectorOnly = 0;
  for (const [i, d] of CORPUS.entries()) {
    const fts = await ftsCandidates(h.db, { tenantId }, d.query, 50);
    // What `ORDER BY embedding <=> query` would return from chunk_vectors: chunks by cosine similarity.
    const [qv] = await embedTexts(h.config, [d.query]);
    const near = chunks
      .map((c, k) => ({ id: c.id, score: cosine(qv, chunkVectors[k]) }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
      .slice(0, 50);
    const fused = fuseRankings([fts, near]);
    // Every candidate of either list, each once; scores are Σ 1/(60 + rank), best first.
    expect(new Set(fused.map((f) => f.id))).toEqual(new Set([...fts, ...near].map((x) => x.id)));
    expect(fused).toHaveLength(new Set([...fts, ...near].map((x) => x.id)).size);
    for (const f of fused) {
      const a = fts.findIndex((x) => x.id === f.id);
      const b = near.findIndex((x) => x.id === f.id);
      expect(f.score).toBeCloseTo((a < 0 ? 0 : 1 / (61 + a)) + (b < 0 ? 0 : 1 / (61 + b)), 12);
    }
    expect(fused.map((f) => f.score)).toEqual([...fused.map((f) => f.score)].sort((x, y) => y - x));
    // Quality: the query's document is in the fused top 3.
    expect(fused.slice(0, 3).map((f) => docOf.get(f.id))).toContain(docIds[i]);
    vectorOnly += fused.filter((f) => !fts.some((x) => x.id === f.id)).length;
  }
  // Chunks that no full-text match finds still reach the fused list through the vector side.
  expect(vectorOnly).toBeGreaterThan(0);
});
