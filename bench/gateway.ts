/**
 * Chat gateway benchmark: the same load against the fake OpenAI-compatible upstream directly
 * (baseline) and through our gateway (auth, validation, persona prompt, feedback lookup, router),
 * in the same process, interleaved request by request. Non-streaming and streaming (SSE read to
 * [DONE]). Prints p50/p99 latency, the added latency, and the throughput ratio at concurrency 8.
 * Run: npm run -s bench -- gateway   (needs PostgreSQL on 127.0.0.1:5432)
 */
import { startFakeOpenAI } from '../test/helpers/fake-openai';
import { fmt, percentile, startBenchApp } from './helpers';

const REPLY = 'The quick brown fox jumps over the lazy dog while the gateway streams every token to the client.';
const SEQUENTIAL = Number(process.env.BENCH_N ?? 300);
const CONCURRENT_TOTAL = Number(process.env.BENCH_TOTAL ?? 400);
const CONCURRENCY = 8;

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  model: string;
}

async function once(t: Target, stream: boolean): Promise<number> {
  const started = performance.now();
  const res = await fetch(t.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...t.headers },
    body: JSON.stringify({ model: t.model, messages: [{ role: 'user', content: 'Say the pangram.' }], stream }),
  });
  const text = await res.text();
  if (res.status !== 200 || (stream ? !text.includes('[DONE]') : !text.includes('quick brown fox'))) {
    throw new Error(`${t.name}: unexpected answer ${res.status} ${text.slice(0, 200)}`);
  }
  return performance.now() - started;
}

/** Sequential and interleaved: one request per target per round. */
async function latency(targets: Target[], stream: boolean): Promise<number[][]> {
  const samples = targets.map(() => [] as number[]);
  for (let i = 0; i < SEQUENTIAL; i++) {
    // Rotate which target goes first so no target always runs right after another.
    for (let k = 0; k < targets.length; k++) {
      const j = (i + k) % targets.length;
      samples[j].push(await once(targets[j], stream));
    }
  }
  return samples;
}

/** Requests per second at a fixed concurrency; targets alternate in slices of 50 requests. */
async function throughput(targets: Target[], stream: boolean): Promise<number[]> {
  const busyMs = targets.map(() => 0);
  const slice = 50;
  for (let done = 0; done < CONCURRENT_TOTAL; done += slice) {
    for (let j = 0; j < targets.length; j++) {
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < slice) {
            next++;
            await once(targets[j], stream);
          }
        }),
      );
      busyMs[j] += performance.now() - started;
    }
  }
  return busyMs.map((ms) => (CONCURRENT_TOTAL / ms) * 1000);
}

async function main(): Promise<void> {
  const fake = await startFakeOpenAI({ defaults: { reply: REPLY } });
  const app = await startBenchApp({ OPENAI_BASE_URL: fake.url });
  try {
    const key = await app.key(['runtime:chat']);
    const auth = { authorization: `Bearer ${key}` };
    const targets: Target[] = [
      { name: 'upstream direct', url: `${fake.url}/chat/completions`, headers: {}, model: 'gpt-4o' },
      { name: 'gateway /v1/chat/completions', url: `${app.url}/v1/chat/completions`, headers: { ...auth, 'X-Svc-Context': 'dev' }, model: 'svc-oracle' },
      { name: 'gateway /v1/mid (pass-through)', url: `${app.url}/v1/mid/chat/completions`, headers: auth, model: 'mid' },
    ];
    for (const stream of [false, true]) for (const t of targets) for (let i = 0; i < 30; i++) await once(t, stream); // warm-up

    console.log(`Chat gateway benchmark: ${SEQUENTIAL} sequential requests per target (interleaved), ${CONCURRENT_TOTAL} at concurrency ${CONCURRENCY}.`);
    console.log(`Reply: ${REPLY.split(' ').length} tokens from a local fake upstream (no model time), so the numbers isolate the gateway's own cost.\n`);
    for (const stream of [false, true]) {
      const lat = await latency(targets, stream);
      const rps = await throughput(targets, stream);
      const base = { p50: percentile(lat[0], 50), p99: percentile(lat[0], 99) };
      console.log(stream ? 'STREAMING (SSE, read to [DONE])' : 'NON-STREAMING (JSON)');
      console.log('target                            p50 ms   p99 ms   added p50   added p99   req/s   throughput ratio');
      targets.forEach((t, i) => {
        const p50 = percentile(lat[i], 50);
        const p99 = percentile(lat[i], 99);
        console.log(
          `${t.name.padEnd(33)} ${fmt(p50).padStart(6)}   ${fmt(p99).padStart(6)}   ${(i ? fmt(p50 - base.p50) : '-').padStart(9)}   ${(i ? fmt(p99 - base.p99) : '-').padStart(9)}   ${rps[i].toFixed(0).padStart(5)}   ${(rps[i] / rps[0]).toFixed(2)}×`,
        );
      });
      console.log('');
    }
  } finally {
    await app.close();
    await fake.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
