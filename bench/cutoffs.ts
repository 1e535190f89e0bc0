/**
 * Cut-off and flush latencies that tests used to assert as upper bounds (tests now assert the
 * behaviour: it was cut off by its limit, it flushed before the upstream finished). Each row is a
 * ratio against a baseline measured in this same run:
 *  - calculator and regex: time to refuse runaway work ÷ the tool's own time limit;
 *  - provider timeout: time to the 504 ÷ the request's timeout against a hanging fake upstream;
 *  - streaming: time to the first token ÷ time to the last token, fake upstream pacing chunks.
 * PASS when the ratio stays under its bound; exits non-zero on any FAIL.
 * Run: npm run -s bench -- cutoffs   (ROUNDS=5 by default)
 */
import { runCommonsTool } from '../activities/commons';
import { createModelRouter } from '../activities/providers';
import { parseConfig } from '../schema/config';
import { startFakeOpenAI } from '../test/helpers/fake-openai';
import { fmt, percentile } from './helpers';

const ROUNDS = Number(process.env.ROUNDS ?? 5);

async function sample(fn: () => Promise<unknown> | unknown): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

interface Row {
  name: string;
  ms: number;
  baseline: number;
  bound: number;
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  const calc = await sample(() =>
    runCommonsTool('calculator', JSON.stringify({ expression: 'f(n) = n < 1 ? 0 : f(n-1) + f(n-1); f(60)' })),
  );
  rows.push({
    name: 'calculator runaway → refused (÷ 250 ms limit)',
    ms: percentile(calc, 50),
    baseline: 250,
    bound: 2,
  });
  const regex = await sample(() =>
    runCommonsTool('regex', JSON.stringify({ op: 'test', pattern: '^(a+)+$', text: `${'a'.repeat(40)}b` })),
  );
  rows.push({
    name: 'regex backtracking → refused (÷ 200 ms limit)',
    ms: percentile(regex, 50),
    baseline: 200,
    bound: 2,
  });

  const fake = await startFakeOpenAI();
  try {
    const router = createModelRouter(parseConfig({ OPENAI_BASE_URL: fake.url }), { localUrl: null });
    fake.setDefault({ hang: true });
    const timeout = await sample(() =>
      router
        .complete({ lane: 'mid', messages: [{ role: 'user', content: 'x' }], timeoutMs: 250 })
        .catch(() => undefined),
    );
    rows.push({ name: 'provider hang → 504 (÷ 250 ms timeout)', ms: percentile(timeout, 50), baseline: 250, bound: 3 });

    fake.setDefault({ reply: 'one two three four five six', chunkDelayMs: 60 });
    const first: number[] = [];
    const last: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const t0 = performance.now();
      let firstAt = 0;
      for await (const c of router.stream({ lane: 'mid', messages: [{ role: 'user', content: 'count' }] })) {
        if (!firstAt && JSON.stringify(c).includes('one')) firstAt = performance.now() - t0;
      }
      first.push(firstAt);
      last.push(performance.now() - t0);
    }
    rows.push({
      name: 'stream first token (÷ last token)',
      ms: percentile(first, 50),
      baseline: percentile(last, 50),
      bound: 0.5,
    });
  } finally {
    await fake.close();
  }

  let failed = 0;
  for (const r of rows) {
    const ratio = r.ms / r.baseline;
    const verdict = ratio <= r.bound ? 'PASS' : 'FAIL';
    if (verdict === 'FAIL') failed++;
    console.log(
      `${r.name}: p50 ${fmt(r.ms)} ms vs ${fmt(r.baseline)} ms → ratio ${ratio.toFixed(2)} (bound ${r.bound}) ${verdict}`,
    );
  }
  if (failed) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
