/**
 * Structured-reasoning benchmark.
 * 1. p50/p99 per endpoint for its typical input (the documented example): the compiler called
 *    directly (baseline) vs the same request through our HTTP API (auth, validation, JSON), same run.
 * 2. Scaling: the example's lists grown to 10, 100, 1,000 and 10,000 items with realistic text
 *    (bench/reasoning-inputs.ts: sentences of 10-30 words, remapped references, shifted dates).
 *    Prints the time per call (best of several runs, the estimate least disturbed by other load)
 *    and the growth 1k→10k, with PASS when it stays within the n·log n bound (13.3×).
 * 3. Worst case: the largest request that fits the default 1 MiB body limit and the schema caps
 *    (every list grown together, output caps in `preferences` at their maximum; once with prose of
 *    the example's length, once 8× longer where the schema allows), with PASS under 500 ms: the
 *    compilers run on the API's event loop, so this is the longest a request can block it.
 * Exits non-zero when any row FAILs. Run: npm run -s bench -- reasoning
 * Options: `--no-api` skips part 1 (no database needed),
 * `--growth` / `--worst` run only part 2 / part 3, a path (e.g. `/quest/scaffold`) limits parts 2-3 to it.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { reasoningEndpoints } from '../reasoning/registry';
import type { ReasoningEndpoint } from '../reasoning/types';
import { fmt, percentile, rng, startBenchApp } from './helpers';
import { grownBody, largestBody, maxedPreferences, prose, type Obj } from './reasoning-inputs';

const GROWTH_BOUND = (10 * Math.log(10_000)) / Math.log(1_000); // n·log n from 1k to 10k: 13.3×
const BLOCK_BUDGET_MS = 500;
const BODY_LIMIT = 1024 * 1024;

function timeCompile(e: ReasoningEndpoint, body: unknown, runs: number): number[] {
  const input = e.request.parse(body);
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    e.compile(input, { surface: 'studio' });
    samples.push(performance.now() - t);
  }
  return samples;
}

// A full collection before each timed run (outside the timing): every run starts from the same
// heap, not from the garbage of the input generator or of the previous run.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Best of at least 3 and at most `max` runs, stopping after about a second. */
function bestTime(e: ReasoningEndpoint, body: unknown, max = 15): number {
  const input = e.request.parse(body);
  e.compile(input, { surface: 'studio' }); // warm-up
  let best = Infinity;
  const start = performance.now();
  for (let i = 0; i < max && (i < 3 || performance.now() - start < 1000); i++) {
    gc();
    const t = performance.now();
    e.compile(input, { surface: 'studio' });
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

/** For endpoints without a list: every prose field as bullet lines, as long as the schema allows. */
function longestProseBody(e: ReasoningEndpoint): Obj {
  let body = maxedPreferences(e, e.example as Obj);
  for (const [k, v] of Object.entries(body)) {
    if (typeof v !== 'string' || v.length < 30) continue;
    const r = rng(7);
    const lines = (len: number) => {
      let out = '';
      while (out.length < len) out += `- ${prose(r, 200)}\n`;
      return out.slice(0, len);
    };
    for (const len of [20_000, 10_000, 5_000, 2_000, 500]) {
      const candidate = { ...body, [k]: lines(len) };
      if (e.request.safeParse(candidate).success) {
        body = candidate;
        break;
      }
    }
  }
  return body;
}

async function typical(endpoints: ReasoningEndpoint[]): Promise<void> {
  const app = await startBenchApp();
  const key = await app.key(['runtime:chat']);
  console.log('## Typical input (documented example): compiler direct vs through the API, same run\n');
  console.log('| endpoint | direct p50 ms | API p50 ms | API p99 ms | API/direct |');
  console.log('|---|---|---|---|---|');
  for (const e of endpoints) {
    timeCompile(e, e.example, 5); // warm-up
    const direct = timeCompile(e, e.example, 50);
    const api: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t = performance.now();
      const res = await fetch(`${app.url}/v1${e.path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(e.example),
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${e.path} answered ${res.status}`);
      api.push(performance.now() - t);
    }
    const d = percentile(direct, 50);
    const a = percentile(api, 50);
    console.log(`| ${e.path} | ${fmt(d)} | ${fmt(a)} | ${fmt(percentile(api, 99))} | ${(a / d).toFixed(1)}× |`);
  }
  await app.close();
}

/** Returns the number of FAIL rows. */
function scaling(endpoints: ReasoningEndpoint[], only?: string): number {
  console.log(
    `\n## Scaling with realistic text (ms per call, best of runs; growth 1k→10k vs the n·log n bound ${GROWTH_BOUND.toFixed(1)}×)\n`,
  );
  const sizes = [10, 100, 1000, 10000];
  console.log(`| endpoint | lists grown | ${sizes.join(' | ')} | growth 100→1k | growth 1k→10k | verdict |`);
  console.log(`|---|---|${sizes.map(() => '---').join('|')}|---|---|---|`);
  let failed = 0;
  for (const e of endpoints) {
    if (only && e.path !== only) continue;
    const row: string[] = [];
    const times: number[] = [];
    let lists = '-';
    for (const n of sizes) {
      const g = grownBody(e, n);
      if (!g) {
        row.push('cap');
        times.push(NaN);
        continue;
      }
      lists = g.lists.join(', ');
      const t = bestTime(e, g.body, n >= 10000 ? 5 : 15);
      times.push(t);
      row.push(fmt(t));
    }
    const ratio = (a: number, b: number) => b / a;
    const g = (a: number, b: number) =>
      Number.isFinite(a) && Number.isFinite(b) ? `${ratio(a, b).toFixed(1)}×` : 'n/a';
    const growth = ratio(times[2], times[3]);
    const verdict = !Number.isFinite(growth) ? 'n/a (no list)' : growth <= GROWTH_BOUND ? 'PASS' : 'FAIL';
    if (verdict === 'FAIL') failed++;
    console.log(
      `| ${e.path} | ${lists} | ${row.join(' | ')} | ${g(times[1], times[2])} | ${g(times[2], times[3])} | ${verdict} |`,
    );
  }
  return failed;
}

/** Returns the number of FAIL rows. */
function worstCase(endpoints: ReasoningEndpoint[], only?: string): number {
  console.log(
    `\n## Worst case within the ${BODY_LIMIT / 1024} KiB body limit and the schema caps (output caps maxed; budget ${BLOCK_BUDGET_MS} ms)\n`,
  );
  console.log('| endpoint | prose | main list n | body KiB | lists grown | ms | verdict |');
  console.log('|---|---|---|---|---|---|---|');
  let failed = 0;
  for (const e of endpoints) {
    if (only && e.path !== only) continue;
    const variants: { label: string; body: Obj; n: string; lists: string }[] = [];
    for (const scale of [1, 8]) {
      const w = largestBody(e, BODY_LIMIT, { proseScale: scale });
      if (w) variants.push({ label: `${scale}×`, body: w.body, n: String(w.n), lists: w.lists.join(', ') });
    }
    if (!variants.length) variants.push({ label: 'longest', body: longestProseBody(e), n: '-', lists: '-' });
    for (const v of variants) {
      const ms = bestTime(e, v.body, 3);
      const verdict = ms <= BLOCK_BUDGET_MS ? 'PASS' : 'FAIL';
      if (verdict === 'FAIL') failed++;
      const kib = (Buffer.byteLength(JSON.stringify(v.body)) / 1024).toFixed(0);
      console.log(`| ${e.path} | ${v.label} | ${v.n} | ${kib} | ${v.lists} | ${fmt(ms)} | ${verdict} |`);
    }
  }
  return failed;
}

async function main(): Promise<void> {
  const endpoints = reasoningEndpoints();
  const args = process.argv.slice(2);
  const only = args.find((a) => a.startsWith('/'));
  // --no-api: skip part 1 (no database needed); --growth / --worst: only part 2 / part 3; /path: one endpoint.
  const partsGiven = args.includes('--growth') || args.includes('--worst');
  if (!args.includes('--no-api') && !partsGiven && !only) await typical(endpoints);
  const failed =
    (!partsGiven || args.includes('--growth') ? scaling(endpoints, only) : 0) +
    (!partsGiven || args.includes('--worst') ? worstCase(endpoints, only) : 0);
  if (failed) {
    console.log(`\n${failed} row(s) FAIL`);
    process.exitCode = 1;
  } else console.log('\nall rows PASS');
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exitCode = 1;
});
