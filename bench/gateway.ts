/**
 * Chat gateway benchmark (issue 16 goals). In one run, interleaved request by request, the same
 * load goes to the fake OpenAI-compatible upstream directly, through a bare Node pass-through
 * proxy (keep-alive agent, no work: the floor any proxy pays), and through our gateway's
 * /v1/chat/completions (auth, limits, persona prompt, feedback signal, router). Checks:
 *   1. added p50 at an instant upstream ≤ 2× the bare proxy's added p50;
 *   2. at a 20 ms upstream, gateway/direct ≤ 1.10× at p50 and ≤ 1.20× at p99;
 *   3. throughput at concurrency 16 ≥ 0.5× direct;
 *   4. SSE time to first token added ≤ 1 ms at p50.
 * Prints every ratio with PASS/FAIL and exits non-zero on any FAIL.
 *
 * Layout: by default the gateway and the bare proxy each run in a Node process of their own
 * (bench/gateway-helpers.ts), as users run a gateway (`npm start`), while the client and the fake
 * upstream stay in this process; the checks of that layout decide PASS/FAIL and the exit code. Then
 * the same phases run with all four in this one process, printed for comparison with earlier
 * figures (docs/decisions.md, "Gateway, fourth speed pass"). BENCH_GATEWAY_LAYOUT=processes or
 * =one runs only that layout (and its checks decide). SVC_HTTP_FAST_PATH=false measures the gateway
 * with every request through Koa.
 * BENCH_PROFILE=cpu|heap with BENCH_PROFILE_DIR (default .) writes an inspector profile of the
 * gateway's process over the throughput phase (gateway.cpuprofile / gateway.heapprofile; with
 * BENCH_PROFILE_PHASE=sse over the sequential SSE first-token phase instead), of the
 * processes layout when both run; in the one-process layout it is the whole bench process. The processes layout also prints each
 * server process's CPU time per request over that phase. The SSE phase also runs the bare proxy, whose
 * time to first token is printed as the floor of the hops (no goal). BENCH_TRACE=1 prints, for the
 * processes layout, each target's first-token timeline stage by stage (bench/gateway-trace.ts).
 * Run: npm run -s bench -- gateway   (needs PostgreSQL on 127.0.0.1:5432; BENCH_N scales the loops)
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startFakeOpenAI, type FakeBehavior, type FakeOpenAI } from '../test/helpers/fake-openai';
import { startServer, type BenchServer, type ProfileKind } from './gateway-helpers';
import { nowMicros, type ServerRecord } from './gateway-trace';
import { fmt, percentile } from './helpers';

const REPLY = 'The quick brown fox jumps over the lazy dog while the gateway streams every token to the client.';
const N = Number(process.env.BENCH_N ?? 200);
/**
 * Sequential requests per target in the 20 ms-upstream phase (BENCH_SLOW_N). Its p99 is a check: with
 * nearest rank, the p99 of 100 samples is their maximum (one slow request decides it); of 500, the
 * fifth slowest.
 */
const SLOW_N = Number(process.env.BENCH_SLOW_N ?? 500);
const CONCURRENCY = 16;
/** Warm-up requests per target, streamed and not, at CONCURRENCY before anything is measured (BENCH_WARM). */
const WARM = Number(process.env.BENCH_WARM ?? 2000);
/** Requests per target in the throughput phase, in interleaved slices of 80 (BENCH_THROUGHPUT_N). */
const THROUGHPUT_N = Number(process.env.BENCH_THROUGHPUT_N ?? 2000);
const LAYOUT = process.env.BENCH_GATEWAY_LAYOUT;
const PROFILE = process.env.BENCH_PROFILE as ProfileKind | undefined;
/** The phase BENCH_PROFILE covers: the throughput phase (default) or the sequential SSE first-token phase. */
const PROFILE_PHASE = process.env.BENCH_PROFILE_PHASE === 'sse' ? 'sse' : 'throughput';
/** BENCH_TRACE=1 (processes layout): the first-token timeline of each proxy, stage by stage. */
const TRACE = process.env.BENCH_TRACE === '1';

/** Client-side marks of one streamed sample (µs, machine-wide monotonic clock; bench/gateway-trace.ts). */
interface ClientMarks {
  send: number;
  /** The fake upstream has the request (it writes the head and the first events in the same tick). */
  upIn: number;
  first: number;
}
const clientMarks = new Map<string, ClientMarks[]>();
let upstreamIn = NaN;

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  model: string;
}

const payload = (t: Target, stream: boolean) =>
  JSON.stringify({ model: t.model, messages: [{ role: 'user', content: 'Say the pangram.' }], stream });

async function once(t: Target, stream: boolean): Promise<number> {
  const started = performance.now();
  const res = await fetch(t.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...t.headers },
    body: payload(t, stream),
  });
  const text = await res.text();
  if (res.status !== 200 || (stream ? !text.includes('[DONE]') : !text.includes('quick brown fox'))) {
    throw new Error(`${t.name}: unexpected answer ${res.status} ${text.slice(0, 200)}`);
  }
  return performance.now() - started;
}

/** Time until the first content token ("The") arrives on a stream; the rest is read and dropped. */
async function ttft(t: Target): Promise<number> {
  upstreamIn = NaN;
  const sendAt = TRACE ? nowMicros() : 0;
  const started = performance.now();
  const res = await fetch(t.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...t.headers },
    body: payload(t, true),
  });
  if (!res.body || res.status !== 200) throw new Error(`${t.name}: stream answered ${res.status}`);
  const decoder = new TextDecoder();
  let seen = '';
  let first = NaN;
  for await (const bytes of res.body) {
    seen += decoder.decode(bytes, { stream: true });
    if (Number.isNaN(first) && seen.includes('"content":"The')) {
      first = performance.now() - started;
      if (TRACE) {
        const marks = clientMarks.get(t.name) ?? [];
        clientMarks.set(t.name, marks);
        marks.push({ send: sendAt, upIn: upstreamIn, first: nowMicros() });
      }
    }
  }
  if (Number.isNaN(first) || !seen.includes('[DONE]')) throw new Error(`${t.name}: stream without the first token`);
  return first;
}

/** One sample per target per round; the order rotates so no target always follows another. */
async function rounds(targets: Target[], n: number, sample: (t: Target) => Promise<number>): Promise<number[][]> {
  const out = targets.map(() => [] as number[]);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < targets.length; k++) {
      const j = (i + k) % targets.length;
      out[j].push(await sample(targets[j]));
    }
  }
  return out;
}

/** Requests per second at CONCURRENCY; targets alternate in slices so machine noise hits both. */
async function throughput(targets: Target[], total: number, stream = false): Promise<number[]> {
  const busy = targets.map(() => 0);
  const slice = 80;
  for (let done = 0; done < total; done += slice) {
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
      busy[j] += performance.now() - started;
    }
  }
  return busy.map((ms) => (total / ms) * 1000);
}

interface Check {
  what: string;
  value: number;
  limit: number;
  atMost: boolean;
}

function table(title: string, targets: Target[], lat: number[][]): void {
  console.log(title);
  console.log('target                              p50 ms   p99 ms');
  targets.forEach((t, i) =>
    console.log(
      `${t.name.padEnd(34)} ${fmt(percentile(lat[i], 50)).padStart(6)}   ${fmt(percentile(lat[i], 99)).padStart(6)}`,
    ),
  );
  console.log('');
}

/**
 * The first-token timeline (BENCH_TRACE=1): per target, the median of each stage over the samples
 * (medians of stages do not add up to the median of the total, which is printed too).
 */
function timeline(targets: Array<[string, ServerRecord[] | undefined]>): void {
  console.log('FIRST-TOKEN TIMELINE (µs per stage, median then mean; server marks from its own process)');
  for (const [name, server] of targets) {
    const client = clientMarks.get(name) ?? [];
    const stages = new Map<string, number[]>();
    const add = (stage: string, from: number | undefined, to: number | undefined) => {
      if (from === undefined || to === undefined || !Number.isFinite(from) || !Number.isFinite(to)) return;
      const list = stages.get(stage) ?? [];
      stages.set(stage, list);
      list.push(to - from);
    };
    client.forEach((c, i) => {
      const r = server?.[i];
      if (!r) {
        add('client send → upstream has the request', c.send, c.upIn);
        add('upstream has it → client has the first token', c.upIn, c.first);
      } else {
        add('client send → server has the request', c.send, r.in);
        add('request → key authenticated', r.in, r.auth);
        add(
          r.auth !== undefined ? 'authenticated → upstream dispatch' : 'request → upstream dispatch',
          r.auth ?? r.in,
          r.dispatch,
        );
        add('dispatch → upstream request written', r.dispatch, r.upWritten);
        add('written (or dispatched) → upstream has it', r.upWritten ?? r.dispatch, c.upIn);
        add('upstream has it → upstream headers in', c.upIn, r.upHeaders);
        add('headers in → first upstream bytes in', r.upHeaders, r.upChunk);
        add('first upstream bytes in → first write to the client', r.upChunk, r.out);
        add('first write → client has the first token', r.out, c.first);
      }
      add('total', c.send, c.first);
    });
    // Every mark of the server (ad-hoc ones too) by its median offset from the request.
    const offsets = new Map<string, number[]>();
    for (const r of server ?? []) {
      if (r.in === undefined) continue;
      const all: Record<string, number | undefined> = { ...r.extra };
      for (const m of ['auth', 'dispatch', 'upWritten', 'upHeaders', 'upChunk', 'out'] as const) all[m] = r[m];
      for (const [k, v] of Object.entries(all))
        if (v !== undefined) (offsets.get(k) ?? offsets.set(k, []).get(k)!).push(v - r.in);
    }
    const order = [...offsets].map(([k, v]) => [k, percentile(v, 50)] as const).sort((a, b) => a[1] - b[1]);
    if (order.length)
      console.log(`  ${name}: median µs from the request: ${order.map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ')}`);
    console.log(`  ${name} (${client.length} samples${server ? `, ${server.length} server records` : ''})`);
    for (const [stage, list] of stages)
      console.log(
        `    ${stage.padEnd(58)} ${percentile(list, 50).toFixed(0).padStart(6)} ${(list.reduce((a, b) => a + b, 0) / list.length).toFixed(0).padStart(6)}`,
      );
  }
  console.log('');
}

/** Every phase in one layout (`oneProcess`: all in this process); returns its checks. */
async function runLayout(
  oneProcess: boolean,
  fake: FakeOpenAI,
  setBehavior: (b: FakeBehavior) => void,
  profile: ProfileKind | undefined,
): Promise<Check[]> {
  const checks: Check[] = [];
  const check = (what: string, value: number, limit: number, atMost = true) =>
    checks.push({ what, value, limit, atMost });
  setBehavior({ reply: REPLY });
  const servers: BenchServer[] = [];
  try {
    const app = await startServer('gateway', fake.url, oneProcess);
    servers.push(app);
    const bare = await startServer('proxy', fake.url, oneProcess);
    servers.push(bare);
    const key = app.key!;
    const direct: Target = {
      name: 'upstream direct',
      url: `${fake.url}/chat/completions`,
      headers: {},
      model: 'gpt-4o',
    };
    const proxy: Target = {
      name: 'bare pass-through proxy',
      url: `${bare.url}/v1/chat/completions`,
      headers: {},
      model: 'gpt-4o',
    };
    const gateway: Target = {
      name: 'gateway /v1/chat/completions',
      url: `${app.url}/v1/chat/completions`,
      headers: { authorization: `Bearer ${key}`, 'X-Svc-Context': 'dev' },
      model: 'svc-oracle',
    };
    const all = [direct, proxy, gateway];
    // Warm-up, not timed: first one at a time (pools, caches), then WARM requests per target and kind at
    // concurrency 16, so every process is measured at its steady state and not while V8 still compiles
    // its hot paths (which ran on compiler threads and doubled the CPU per request of a fresh process).
    for (const stream of [false, true]) for (const t of all) for (let i = 0; i < 50; i++) await once(t, stream);
    if (WARM > 0) for (const stream of [false, true]) await throughput(all, WARM, stream);
    console.log(
      `\n=== ${oneProcess ? 'ONE PROCESS: client, upstream, proxy and gateway in this process' : 'PROCESSES: gateway and bare proxy each in its own process; client and upstream in this one'} ===\n`,
    );

    const instant = await rounds(all, N, (t) => once(t, false));
    table('INSTANT UPSTREAM (non-streaming)', all, instant);
    const p50 = instant.map((s) => percentile(s, 50));
    console.log(`added p50: bare proxy ${fmt(p50[1] - p50[0])} ms, gateway ${fmt(p50[2] - p50[0])} ms\n`);
    check(
      'added p50 at an instant upstream, gateway / bare proxy',
      (p50[2] - p50[0]) / Math.max(0.05, p50[1] - p50[0]),
      2,
    );

    const profileThroughput = profile && PROFILE_PHASE === 'throughput';
    if (profileThroughput) await app.profileStart(profile);
    // The bare proxy runs too, as a reference (no goal): what a proxy that does no work reaches here.
    const cpuBefore = oneProcess ? [] : await Promise.all([app.cpuMicros(), bare.cpuMicros()]);
    const rps = await throughput([direct, gateway, proxy], THROUGHPUT_N);
    if (!oneProcess) {
      // CPU time, not wall time: what each server's process spent per request it relayed in this phase.
      const [g, b] = (await Promise.all([app.cpuMicros(), bare.cpuMicros()])).map(
        (v, i) => (v - cpuBefore[i]) / THROUGHPUT_N,
      );
      console.log(
        `CPU per request in this phase: gateway process ${g.toFixed(0)} µs, bare proxy process ${b.toFixed(0)} µs (${(g / b).toFixed(2)}×)`,
      );
    }
    if (profileThroughput) {
      const file = path.resolve(process.env.BENCH_PROFILE_DIR ?? '.', `gateway.${profile}profile`);
      await app.profileStop(file);
      console.log(`profile of the gateway's process over the throughput phase: ${file}\n`);
    }
    console.log(
      `THROUGHPUT at concurrency ${CONCURRENCY}: direct ${rps[0].toFixed(0)} req/s, gateway ${rps[1].toFixed(0)} req/s (${(rps[1] / rps[0]).toFixed(2)}), bare proxy ${rps[2].toFixed(0)} req/s (${(rps[2] / rps[0]).toFixed(2)}, reference)\n`,
    );
    check(`throughput at concurrency ${CONCURRENCY}, gateway / direct`, rps[1] / rps[0], 0.5, false);

    setBehavior({ reply: REPLY, chunkDelayMs: 2 });
    // The bare proxy relays the events as they come (chunk by chunk): the floor of the hops (reference, no goal).
    const tracing = TRACE && !oneProcess;
    if (tracing) {
      clientMarks.clear();
      await Promise.all([app.traceStart(), bare.traceStart()]);
    }
    if (profile && PROFILE_PHASE === 'sse') await app.profileStart(profile);
    const first = await rounds([direct, gateway, proxy], N, ttft);
    if (profile && PROFILE_PHASE === 'sse') {
      const file = path.resolve(process.env.BENCH_PROFILE_DIR ?? '.', `gateway.${profile}profile`);
      await app.profileStop(file);
      console.log(`profile of the gateway's process over the SSE first-token phase: ${file}`);
    }
    const f50 = first.map((s) => percentile(s, 50));
    console.log(
      `SSE TIME TO FIRST TOKEN p50: direct ${fmt(f50[0])} ms, gateway ${fmt(f50[1])} ms (added ${fmt(f50[1] - f50[0])} ms), bare proxy ${fmt(f50[2])} ms (added ${fmt(f50[2] - f50[0])} ms, reference)\n`,
    );
    if (tracing) {
      const [g, b] = await Promise.all([app.traceStop(), bare.traceStop()]);
      if (process.env.BENCH_TRACE_DIR) {
        const file = path.resolve(process.env.BENCH_TRACE_DIR, 'gateway-trace.json');
        writeFileSync(file, JSON.stringify({ gateway: g, proxy: b, client: Object.fromEntries(clientMarks) }));
        console.log(`first-token marks: ${file}`);
      }
      timeline([
        [direct.name, undefined],
        [proxy.name, b],
        [gateway.name, g],
      ]);
    }
    check('SSE time to first token added at p50, ms', f50[1] - f50[0], 1);

    setBehavior({ reply: REPLY, delayMs: 20 });
    const slow = await rounds([direct, gateway], SLOW_N, (t) => once(t, false));
    table(`20 MS UPSTREAM (non-streaming, ${SLOW_N} requests per target)`, [direct, gateway], slow);
    check('20 ms upstream p50, gateway / direct', percentile(slow[1], 50) / percentile(slow[0], 50), 1.1);
    check('20 ms upstream p99, gateway / direct', percentile(slow[1], 99) / percentile(slow[0], 99), 1.2);
  } finally {
    for (const s of servers.reverse()) await s.close();
  }
  return checks;
}

/** Prints the checks; the number that failed. */
function report(title: string, checks: Check[]): number {
  console.log(title);
  let failed = 0;
  for (const c of checks) {
    const pass = c.atMost ? c.value <= c.limit : c.value >= c.limit;
    if (!pass) failed++;
    console.log(
      `${pass ? 'PASS' : 'FAIL'}  ${c.what}: ${c.value.toFixed(2)} (goal ${c.atMost ? '≤' : '≥'} ${c.limit})`,
    );
  }
  return failed;
}

async function main(): Promise<void> {
  let behavior: FakeBehavior = { reply: REPLY };
  const fake = await startFakeOpenAI({ defaults: { reply: REPLY } });
  fake.onRequest(() => {
    if (TRACE) upstreamIn = nowMicros();
    return behavior;
  });
  const setBehavior = (b: FakeBehavior) => (behavior = b);
  console.log(
    `Chat gateway benchmark: ${N} interleaved sequential requests per target and phase (${SLOW_N} at the 20 ms upstream); throughput at concurrency ${CONCURRENCY} over ${THROUGHPUT_N} requests per target; after a warm-up of ${WARM} requests per target and kind at that concurrency; fast path ${process.env.SVC_HTTP_FAST_PATH ?? 'true (default)'}.`,
  );
  try {
    if (LAYOUT === 'one' || LAYOUT === 'processes') {
      const checks = await runLayout(LAYOUT === 'one', fake, setBehavior, PROFILE);
      if (report(`\nCHECKS (${LAYOUT === 'one' ? 'one process' : 'processes'})`, checks)) process.exitCode = 1;
      return;
    }
    // A profile is taken in the processes layout only (the gateway's own process).
    const processes = await runLayout(false, fake, setBehavior, PROFILE);
    const one = await runLayout(true, fake, setBehavior, undefined);
    report('\nFOR COMPARISON, one process (does not decide the exit code)', one);
    if (report('\nCHECKS, processes layout (as users run the gateway; decides the exit code)', processes))
      process.exitCode = 1;
  } finally {
    await fake.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
