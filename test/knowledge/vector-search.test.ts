import pino from 'pino';
import { sql } from 'slonik';
import { z } from 'zod';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { backfillVectors, vectorBackfill } from '../../activities/knowledge/backfill';
import { knowledgeMode } from '../../activities/knowledge/mode';
import { indexDocument } from '../../activities/knowledge/pipeline';
import { searchKnowledge } from '../../activities/knowledge/search';
import { vectorCandidates } from '../../activities/store/chunks';
import { createDb, type Db } from '../../activities/store/db';
import { createTenant } from '../../activities/store/keys';
import { runMigrations } from '../../activities/store/migrate';
import { createSpace } from '../../activities/store/spaces';
import { parseConfig, type Config } from '../../schema/config';
import { freePort } from '../../workers/temporal-dev';
import { fakeEmbedding, startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai';

/**
 * The hybrid search SQL run for real: PostgreSQL here has no pgvector, but PGlite ships the real
 * pgvector extension (@electric-sql/pglite-pgvector for PGlite 0.5). The service's migrations run
 * on it through pglite-socket, and the service's own code (mode check, index, vector query,
 * fusion, backfill) talks to it over the PostgreSQL protocol like to any server.
 */
jest.setTimeout(120_000);

const log = pino({ level: 'silent' });
let pglite: PGlite;
let server: PGLiteSocketServer;
let url: string;
let fake: FakeOpenAI;
let ftsConfig: Config;
let hybridConfig: Config;
const pools: Db[] = [];

/** A new pool: the search mode is cached per pool, so a new pool sees a changed provider at once. */
async function pool(): Promise<Db> {
  // The socket server takes two connections: close the previous pool first.
  for (const old of pools.splice(0)) {
    await vectorBackfill(old);
    await old.end();
  }
  const db = await createDb({ url, maxConnections: 1 });
  pools.push(db);
  return db;
}

const count = (db: Db, table: 'chunks' | 'chunk_vectors', tenantId: string) =>
  db.oneFirst(
    sql.type(
      z.object({ n: z.number() }),
    )`SELECT count(*)::int AS n FROM ${sql.identifier([table])} WHERE tenant_id = ${tenantId}`,
  );

const DOCS = [
  {
    title: 'Lighthouse keeping',
    text: 'The lighthouse keeper trims the lamp wick every evening and logs passing ships.',
  },
  { title: 'Sourdough', text: 'Feed the sourdough starter with flour and water, then wait for it to double.' },
  { title: 'Bicycle repair', text: 'To fix a flat tyre, remove the inner tube, find the puncture and apply a patch.' },
];

beforeAll(async () => {
  pglite = await PGlite.create({ extensions: { vector } });
  const port = await freePort();
  // PGlite is not safe with concurrent connections: one pooled connection plus the migration client.
  server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port, maxConnections: 2 });
  await server.start();
  url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await runMigrations(url);
  fake = await startFakeOpenAI({ embeddings: { enabled: true } });
  ftsConfig = parseConfig({ DATABASE_URL: url, SVC_LOG_LEVEL: 'silent' });
  hybridConfig = parseConfig({ DATABASE_URL: url, SVC_LOG_LEVEL: 'silent', OPENAI_BASE_URL: fake.url });
});

afterAll(async () => {
  for (const db of pools) await db.end();
  await server?.stop();
  await pglite?.close();
  await fake?.close();
});

test('chunks written in fts mode get vectors from the backfill; then vector search finds them', async () => {
  // Phase 1: pgvector is there but no embeddings provider: fts mode, chunks without vectors.
  const ftsDb = await pool();
  expect(await knowledgeMode(ftsDb, ftsConfig, log)).toEqual({
    search_mode: 'fts',
    vector_extension: true,
    embeddings: false,
  });
  const tenantId = await createTenant(ftsDb);
  const docs = [];
  for (const d of DOCS)
    docs.push(
      await indexDocument(
        { db: ftsDb, config: ftsConfig, log },
        {
          tenantId,
          sourceKind: 'ingest',
          title: d.title,
          mediaType: 'text/plain',
          sizeBytes: d.text.length,
          text: d.text,
        },
      ),
    );
  const chunks = await count(ftsDb, 'chunks', tenantId);
  expect(chunks).toBeGreaterThanOrEqual(DOCS.length);
  expect(await count(ftsDb, 'chunk_vectors', tenantId)).toBe(0);

  // Phase 2: the provider answers /embeddings: the mode check says hybrid and starts the backfill.
  const db = await pool();
  const before = fake.embeddingRequests.length;
  expect(await knowledgeMode(db, hybridConfig, log)).toEqual({
    search_mode: 'hybrid',
    vector_extension: true,
    embeddings: true,
  });
  const backfill = vectorBackfill(db);
  expect(backfill).toBeDefined();
  expect(await backfill).toBe(chunks);
  expect(await count(db, 'chunk_vectors', tenantId)).toBe(chunks);
  expect(fake.embeddingRequests.length).toBeGreaterThan(before + 1); // the probe, then the backfill batch
  // pgvector's cosine order: each document's own text is its nearest chunk (distance 0).
  for (const [i, d] of DOCS.entries()) {
    const near = await vectorCandidates(db, { tenantId }, fakeEmbedding(d.text), 10);
    expect(near).toHaveLength(chunks);
    const top = await db.oneFirst(
      sql.type(z.object({ document_id: z.string() }))`SELECT document_id FROM chunks WHERE id = ${near[0].id}`,
    );
    expect(top).toBe(docs[i].document.id);
    expect(near[0].score).toBeCloseTo(1, 5);
    expect(near.map((n) => n.score)).toEqual([...near.map((n) => n.score)].sort((a, b) => b - a));
  }
  // A second run finds nothing left to do.
  expect(await backfillVectors({ db, config: hybridConfig, log })).toBe(0);
});

test('hybrid search runs the real SQL: fused ranking, tenant and space filters, new documents embedded at write time', async () => {
  const db = await pool();
  expect((await knowledgeMode(db, hybridConfig, log)).search_mode).toBe('hybrid');
  await vectorBackfill(db);
  const deps = { db, config: hybridConfig, log };
  const tenantId = await createTenant(db);
  const other = await createTenant(db);
  const space = await createSpace(db, { tenantId, name: 'Bikes' });
  const mine = await indexDocument(deps, {
    tenantId,
    spaceId: space.id,
    sourceKind: 'ingest',
    title: 'Gears',
    text: 'Shift the gears of the bicycle before the climb.',
    mediaType: 'text/plain',
    sizeBytes: 10,
  });
  const loose = await indexDocument(deps, {
    tenantId,
    sourceKind: 'ingest',
    title: 'Tea',
    text: 'Brew green tea at eighty degrees for two minutes.',
    mediaType: 'text/plain',
    sizeBytes: 10,
  });
  await indexDocument(deps, {
    tenantId: other,
    sourceKind: 'ingest',
    title: 'Their gears',
    text: 'Shift the gears of the bicycle before the climb.',
    mediaType: 'text/plain',
    sizeBytes: 10,
  });
  // Written in hybrid mode: vectors at write time, no backfill needed.
  expect(await count(db, 'chunk_vectors', tenantId)).toBe(await count(db, 'chunks', tenantId));

  const r = await searchKnowledge(deps, { tenantId, q: 'bicycle gears', limit: 5 });
  expect(r.mode).toBe('hybrid');
  expect(r.data[0].document_id).toBe(mine.document.id);
  // The tea document shares no word with the query: only the vector side can bring it in.
  expect(r.data.map((x) => x.document_id)).toContain(loose.document.id);
  // Never another tenant's chunk, from either side.
  const theirs = await vectorCandidates(db, { tenantId: other }, fakeEmbedding('bicycle gears'), 50);
  const ownIds = new Set(r.data.map((x) => x.chunk_id));
  expect(theirs.length).toBeGreaterThan(0);
  for (const t of theirs) expect(ownIds.has(t.id)).toBe(false);
  const all = await vectorCandidates(db, { tenantId }, fakeEmbedding('bicycle gears'), 50);
  expect(all.every((x) => !theirs.some((t) => t.id === x.id))).toBe(true);
  // The space filter applies to the vector side too.
  const inSpace = await searchKnowledge(deps, { tenantId, q: 'green tea', limit: 5, spaceId: space.id });
  expect(inSpace.mode).toBe('hybrid');
  expect(inSpace.data.map((x) => x.document_id)).toEqual([mine.document.id]);
});

test('the backfill works in batches, across tenants, and only fills what is missing', async () => {
  const ftsDb = await pool();
  expect((await knowledgeMode(ftsDb, ftsConfig, log)).search_mode).toBe('fts');
  const tenants = [await createTenant(ftsDb), await createTenant(ftsDb)];
  for (const tenantId of tenants) {
    for (const [i, d] of DOCS.entries()) {
      await indexDocument(
        { db: ftsDb, config: ftsConfig, log },
        {
          tenantId,
          sourceKind: 'ingest',
          title: `${d.title} ${i}`,
          mediaType: 'text/plain',
          sizeBytes: d.text.length,
          text: d.text,
        },
      );
    }
  }
  const missing = (db: Db) =>
    db.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id)`);
  const gap = await missing(ftsDb);
  expect(gap).toBe(2 * DOCS.length);
  // Called directly (no mode check on this pool, so no background run competes), two chunks a batch.
  const db = await pool();
  const requests = fake.embeddingRequests.length;
  expect(await backfillVectors({ db, config: hybridConfig, log }, 2)).toBe(gap);
  expect(await missing(db)).toBe(0);
  expect(fake.embeddingRequests.length - requests).toBe(4); // 3 chunks per tenant: 2 + 1, twice
  for (const tenantId of tenants)
    expect(await count(db, 'chunk_vectors', tenantId)).toBe(await count(db, 'chunks', tenantId));
  expect(await backfillVectors({ db, config: hybridConfig, log }, 2)).toBe(0);
});
