/**
 * Structured-reasoning benchmark.
 * 1. p50/p99 per endpoint for its typical input (the documented example): the compiler called
 *    directly (baseline) vs the same request through our HTTP API (auth, validation, JSON), same run.
 * 2. Scaling: the example's main list scaled to 10, 100, 1,000 and 10,000 items; prints the time per
 *    call and the growth per 10× step next to the n·log n bound.
 * Run: npm run build && node dist/bench/reasoning.js
 */
import { reasoningEndpoints } from '../reasoning/registry';
import type { ReasoningEndpoint } from '../reasoning/types';
import { fmt, percentile, startBenchApp } from './helpers';

type Obj = Record<string, unknown>;

/** The largest top-level list of objects in the example: the input that grows with n. */
function mainList(example: Obj): string | undefined {
  let best: string | undefined;
  for (const [k, v] of Object.entries(example)) {
    if (Array.isArray(v) && v.length && typeof v[0] === 'object' && (!best || v.length > (example[best] as unknown[]).length)) best = k;
  }
  return best;
}

/** Replicates the main list to n items; copies get unique ids and titles, and keep references to originals. */
function scaled(example: Obj, n: number): Obj | undefined {
  const key = mainList(example);
  if (!key) return undefined;
  const items = example[key] as Obj[];
  const out: Obj[] = [];
  for (let i = 0; i < n; i++) {
    const src = items[i % items.length];
    if (i < items.length) {
      out.push(src);
      continue;
    }
    const copy: Obj = { ...src };
    for (const f of ['id', 'title', 'name', 'text', 'label']) if (typeof copy[f] === 'string') copy[f] = `${copy[f]} ${i}`;
    for (const f of ['dependencies', 'depends_on', 'needs']) if (Array.isArray(copy[f])) copy[f] = [];
    out.push(copy);
  }
  return { ...example, [key]: out };
}

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

async function main(): Promise<void> {
  const app = await startBenchApp();
  const key = await app.key(['runtime:chat']);
  const endpoints = reasoningEndpoints();
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

  console.log('\n## Scaling of the main input list (ms per call, p50; growth per 10× vs the n·log n bound)\n');
  const sizes = [10, 100, 1000, 10000];
  console.log(`| endpoint | list | ${sizes.join(' | ')} | growth 100→1k | growth 1k→10k | n·log n bound |`);
  console.log(`|---|---|${sizes.map(() => '---').join('|')}|---|---|---|`);
  for (const e of endpoints) {
    const key = mainList(e.example as Obj);
    const row: string[] = [];
    const times: number[] = [];
    for (const n of sizes) {
      const body = scaled(e.example as Obj, n);
      if (!body || !e.request.safeParse(body).success) {
        row.push('cap');
        times.push(NaN);
        continue;
      }
      const runs = n >= 10000 ? 3 : n >= 1000 ? 5 : 15;
      timeCompile(e, body, 1);
      const t = percentile(timeCompile(e, body, runs), 50);
      times.push(t);
      row.push(fmt(t));
    }
    const g = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) ? `${(b / a).toFixed(1)}×` : 'n/a');
    console.log(`| ${e.path} | ${key ?? '-'} | ${row.join(' | ')} | ${g(times[1], times[2])} | ${g(times[2], times[3])} | ≤ ${(10 * Math.log(10000) / Math.log(1000)).toFixed(1)}× |`);
  }
  await app.close();
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exitCode = 1;
});
