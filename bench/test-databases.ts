/**
 * Test databases, same run, interleaved: a database created and migrated from scratch (what every
 * integration test file did before) vs a copy of a migrated template (`CREATE DATABASE … TEMPLATE`,
 * what the Jest global setup now prepares). Local PostgreSQL only (TEST_PG_URL).
 * PASS when the copy's median is below the migration's. Exits non-zero on FAIL.
 * Run: npm run -s bench -- test-databases   (ROUNDS=8 by default)
 */
import { ensureDatabase, runMigrations } from '../activities/store/migrate';
import { randomToken } from '../activities/store/ids';
import { cloneDatabase, createTemplateDatabase, dropDatabase } from '../test/helpers/template-db';
import { fmt, percentile } from './helpers';

const ROUNDS = Math.min(Number(process.env.ROUNDS ?? 8), 50);
const BASE = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';

async function main(): Promise<void> {
  const template = await createTemplateDatabase(BASE);
  const migrate: number[] = [];
  const copy: number[] = [];
  try {
    for (let i = 0; i < ROUNDS; i++) {
      const a = `svc_bench_${process.pid}_${randomToken(8)}`;
      let t = performance.now();
      await ensureDatabase(`${BASE}/${a}`);
      await runMigrations(`${BASE}/${a}`);
      migrate.push(performance.now() - t);
      await dropDatabase(BASE, a);
      const b = `svc_bench_${process.pid}_${randomToken(8)}`;
      t = performance.now();
      await cloneDatabase(BASE, template, b);
      copy.push(performance.now() - t);
      await dropDatabase(BASE, b);
    }
  } finally {
    await dropDatabase(BASE, template);
  }
  const m = percentile(migrate, 50);
  const c = percentile(copy, 50);
  console.log(`rounds ${ROUNDS}`);
  console.log(`migrate from scratch  p50 ${fmt(m)} ms  max ${fmt(Math.max(...migrate))} ms`);
  console.log(`copy of the template  p50 ${fmt(c)} ms  max ${fmt(Math.max(...copy))} ms`);
  console.log(`ratio copy/migrate ${(c / m).toFixed(2)}`);
  const pass = c < m;
  console.log(pass ? 'PASS' : 'FAIL');
  if (!pass) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
