/**
 * Knowledge store benchmark: ingest throughput (chunks/s) through the real write path and search
 * latency (p50/p99) at 1k, 10k and 100k chunks, against baselines measured in the same run:
 * - ingest: the same rows inserted into an unindexed table (the cost of chunking + full-text indexing);
 * - search: the same two-word question answered by an ILIKE scan ranked by words matched (what the index saves);
 * - quality: recall@3 of the hand-written corpus queries, buried among the synthetic chunks.
 *
 * Run: npm run -s bench -- knowledge  (BENCH_PG_URL, default postgres://postgres@127.0.0.1:5432;
 * BENCH_MAX_CHUNKS to stop earlier, default 100000). Uses its own scratch database, dropped at the end.
 */
import pg from 'pg';
import pino from 'pino';
import { sql } from 'slonik';
import { searchKnowledge } from '../activities/knowledge/search';
import { indexDocument } from '../activities/knowledge/pipeline';
import { createDb } from '../activities/store/db';
import { randomToken } from '../activities/store/ids';
import { createTenant } from '../activities/store/keys';
import { ensureDatabase, runMigrations } from '../activities/store/migrate';
import { parseConfig } from '../schema/config';
import { CORPUS } from '../test/knowledge/corpus';
import { rng } from './helpers';

const PG = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';
const MAX = Number(process.env.BENCH_MAX_CHUNKS ?? 100_000);
const TIERS = [1_000, 10_000, 100_000].filter((t) => t <= MAX);

const rand = rng(42); // deterministic, so every run ingests the same text
const SYL = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'de', 'fa', 'go', 'hu', 'pe', 'ri', 'zo', 'ba'];
const VOCAB = Array.from({ length: 3000 }, () =>
  Array.from({ length: 2 + Math.floor(rand() * 3) }, () => SYL[Math.floor(rand() * SYL.length)]).join(''),
);
const zipf = () => VOCAB[Math.floor(VOCAB.length * Math.pow(rand(), 2.2))];
/** One ~500-character paragraph: the chunker packs exactly one per chunk (target 900). */
const paragraph = () => {
  const words: string[] = [];
  let len = 0;
  while (len < 480) {
    const w = zipf();
    words.push(w);
    len += w.length + 1;
  }
  return `${words.join(' ')}.`;
};

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
const fmt = (n: number, d = 1) => n.toFixed(d).padStart(9);

async function main(): Promise<void> {
  const name = `svc_bench_knowledge_${randomToken(6)}`;
  const url = `${PG}/${name}`;
  await ensureDatabase(url);
  await runMigrations(url);
  const db = await createDb({ url, maxConnections: 4 });
  const config = parseConfig({ DATABASE_URL: url, SVC_LOG_LEVEL: 'silent' });
  const deps = { db, config, log: pino({ level: 'silent' }) };
  const tenantId = await createTenant(db);
  await db.query(sql.unsafe`CREATE UNLOGGED TABLE bench_plain (id text, tenant_id text, text text)`);
  const corpusIds: string[] = [];
  for (const d of CORPUS)
    corpusIds.push(
      (
        await indexDocument(deps, {
          tenantId,
          sourceKind: 'ingest',
          title: d.title,
          mediaType: 'text/plain',
          sizeBytes: d.text.length,
          text: d.text,
        })
      ).document.id,
    );

  const rows: string[] = [
    'tier      ingest c/s  baseline c/s  ratio   fts p50 ms  fts p99 ms  ilike p50 ms  speed-up  recall@3',
  ];
  let total = CORPUS.length;
  for (const tier of TIERS) {
    // Ingest up to the tier: documents of 5 chunks, 4 writers at once.
    const todo = Math.ceil((tier - total) / 5);
    const docs = Array.from({ length: todo }, () => Array.from({ length: 5 }, paragraph).join('\n\n'));
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < docs.length) {
          const text = docs[next++];
          await indexDocument(deps, {
            tenantId,
            sourceKind: 'ingest',
            title: `Synthetic ${next}`,
            mediaType: 'text/plain',
            sizeBytes: text.length,
            text,
          });
        }
      }),
    );
    const ingestS = (performance.now() - started) / 1000;
    const added = todo * 5;
    total += added;
    // Baseline: the same paragraphs into an unindexed table, same batch size and writers.
    const paras = docs.flatMap((d) => d.split('\n\n'));
    let at = 0;
    const baseStart = performance.now();
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (at < paras.length) {
          const batch = paras.slice(at, (at += 5)).map((t) => [randomToken(20), tenantId, t]);
          await db.query(
            sql.unsafe`INSERT INTO bench_plain SELECT * FROM ${sql.unnest(batch, ['text', 'text', 'text'])}`,
          );
        }
      }),
    );
    const baseS = (performance.now() - baseStart) / 1000;
    await db.query(sql.unsafe`ANALYZE chunks`);

    // Search latency: 200 two-word queries, sequential.
    const lat: number[] = [];
    for (let i = 0; i < 200; i++) {
      const q = `${zipf()} ${VOCAB[Math.floor(rand() * VOCAB.length)]}`;
      const t0 = performance.now();
      await searchKnowledge(deps, { tenantId, q, limit: 10 });
      lat.push(performance.now() - t0);
    }
    lat.sort((a, b) => a - b);
    // Baseline: the same two-word question answered by scanning (OR of ILIKEs, ranked by words matched).
    const naive: number[] = [];
    for (let i = 0; i < 20; i++) {
      const [w1, w2] = [zipf(), VOCAB[Math.floor(rand() * VOCAB.length)]].map((w) => `%${w}%`);
      const t0 = performance.now();
      await db.any(sql.unsafe`
        SELECT id FROM chunks WHERE tenant_id = ${tenantId} AND (text ILIKE ${w1} OR text ILIKE ${w2})
        ORDER BY (text ILIKE ${w1})::int + (text ILIKE ${w2})::int DESC, id LIMIT 10`);
      naive.push(performance.now() - t0);
    }
    naive.sort((a, b) => a - b);
    let found = 0;
    for (const [i, d] of CORPUS.entries()) {
      const r = await searchKnowledge(deps, { tenantId, q: d.query, limit: 3 });
      if (r.data.some((hit) => hit.document_id === corpusIds[i])) found++;
    }
    const ingestRate = added / ingestS;
    const baseRate = paras.length / baseS;
    rows.push(
      `${String(tier).padEnd(8)}${fmt(ingestRate, 0)}  ${fmt(baseRate, 0)}  ${(ingestRate / baseRate).toFixed(2).padStart(6)}  ${fmt(pct(lat, 50), 2)}  ${fmt(pct(lat, 99), 2)}    ${fmt(pct(naive, 50), 2)}  ${(pct(naive, 50) / pct(lat, 50)).toFixed(1).padStart(7)}x  ${found}/${CORPUS.length}`,
    );
    console.log(rows.at(-1));
  }
  console.log(`\nknowledge store (full-text mode), ${total} chunks at the end\n${rows.join('\n')}`);
  await db.end();
  const admin = new pg.Client({ connectionString: `${PG}/postgres` });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exitCode = 1;
});
