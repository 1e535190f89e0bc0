/**
 * WebSocket bench: 1,000 clients in a separate load process on `/v1/ws` of the API run the way a deployer runs it
 * on this host: N API processes sharing one port (SVC_API_PROCESSES; this process is their primary through the
 * same helper as `npm run api`, workers/api-cluster.ts, and each runs dist/workers/api.js). The server sends
 * 10 frames/s for 10 s through the real path (NOTIFY on PostgreSQL → each API process's LISTEN → validation →
 * send). Frame delay = receive time − publish time (same machine clock). Goal: p99 ≤ 50 ms, every frame delivered.
 * BENCH_SERVER_PROCS: API processes (default: the cores available, as SVC_API_PROCESSES=auto). Unless it is 1,
 * a 1-process run comes first as the same-run baseline (BENCH_BASELINE=0 skips it); PASS/FAIL is the N run's.
 * BENCH_LOAD_PROCS (default 1) splits the clients over several load processes. BENCH_WARMUP_S (12) seconds of
 * unmeasured frames come first. On a 2-core machine shared with the load process, a second API process halves each
 * process's fan-out but competes with the load generator for the cores (docs/decisions.md, "WebSocket fan-out
 * over several API processes").
 * Also printed, to tell where a frame's time goes: NOTIFY transit (publish → a LISTEN connection in this
 * process), and per API process (asked over IPC): clients, fan-out time per broadcast (svc_ws_fanout_seconds),
 * event-loop delay (prom-client's monitor, 10 ms resolution), CPU per broadcast and GC pauses in the window; the
 * load processes' event-loop delay and CPU per broadcast.
 * Run: npm run -s bench -- ws   (needs PostgreSQL on 127.0.0.1:5432 and the Temporal CLI)
 */
import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { publishDispatch } from '../activities/live/publish';
import { createDb, type Db } from '../activities/store/db';
import { createEventListener } from '../activities/store/event-listener';
import { LIVE_CHANNEL } from '../activities/store/live';
import { freshDatabase } from '../test/helpers/harness';
import { apiProcessCount, startApiProcesses, type ApiProcesses } from '../workers/api-cluster';
import { findOrBuildTemporalCli, freePort, startDevServer } from '../workers/temporal-dev';
import { fmt, percentile } from './helpers';
import type { LoadResult } from './ws-load';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1000);
const RATE = 10;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const GOAL_P99_MS = 50;
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 12);
const LOAD_PROCS = Math.max(1, Number(process.env.BENCH_LOAD_PROCS ?? 1));
const SERVER_PROCS = process.env.BENCH_SERVER_PROCS ? Number(process.env.BENCH_SERVER_PROCS) : apiProcessCount('auto');
const BASELINE = SERVER_PROCS > 1 && process.env.BENCH_BASELINE !== '0';
/**
 * BENCH_NODE_ARGS: Node options for every API and load process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/p` (a CPU
 * profile of each, written when it exits) or `--trace-gc`.
 */
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);

const GC = 'svc_nodejs_gc_duration_seconds';
type ProcessMetrics = Awaited<ReturnType<ApiProcesses['metricsByProcess']>>[number];

/** The value of a metric's sample whose name ends with `suffix` (histograms carry _sum and _count samples). */
function sample(p: ProcessMetrics, metric: string, suffix = '', labels: Record<string, string> = {}): number {
  const m = p.metrics.find((x) => x.name === metric);
  const v = m?.values.find(
    (x) =>
      ((x as { metricName?: string }).metricName ?? metric).endsWith(suffix) &&
      Object.entries(labels).every(([k, want]) => (x.labels as Record<string, unknown>)[k] === want),
  );
  return v?.value ?? 0;
}

/** How much a metric's sample grew from `b` to `a`. */
const grew = (a: ProcessMetrics, b: ProcessMetrics | undefined, metric: string, suffix = '', labels = {}) =>
  sample(a, metric, suffix, labels) - (b ? sample(b, metric, suffix, labels) : 0);

interface RunResult {
  procs: number;
  p99: number;
  pass: boolean;
}

async function measure(procs: number, env: NodeJS.ProcessEnv, db: Db, dbUrl: string): Promise<RunResult> {
  const port = await freePort();
  const apis = startApiProcesses({
    count: procs,
    log: pino({ level: 'warn' }),
    exec: path.join(__dirname, '../workers/api.js'),
    execArgv: NODE_ARGS,
    env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
  });
  // NOTIFY transit: when each bench frame's notice reaches a LISTEN connection of another process on this host.
  const transit: number[] = [];
  const listener = createEventListener({ url: dbUrl, log: pino({ level: 'silent' }) });
  const unlisten = listener.listen(LIVE_CHANNEL, {
    onPayload: (p) => {
      const id = /"id":"bench-([0-9.]+)"/.exec(p)?.[1];
      if (id) transit.push(performance.timeOrigin + performance.now() - Number(id));
    },
  });
  const url = `ws://127.0.0.1:${port}/v1/ws`;
  const loads: ChildProcess[] = [];
  try {
    await apis.ready;
    for (let i = 0; i < LOAD_PROCS; i++) {
      const n = Math.floor(CLIENTS / LOAD_PROCS) + (i < CLIENTS % LOAD_PROCS ? 1 : 0);
      loads.push(fork(path.join(__dirname, 'ws-load.js'), [url, String(n)], { execArgv: NODE_ARGS, stdio: 'inherit' }));
    }
    /** The next message of a load process (results come over IPC: its stdout stays free for tracing). */
    const next = <T>(child: ChildProcess) =>
      new Promise<T>((resolve, reject) => {
        const onExit = (code: number | null) => reject(new Error(`a load process exited with ${code}`));
        child.once('exit', onExit);
        child.once('message', (m) => {
          child.off('exit', onExit);
          resolve(m as T);
        });
      });
    let ready = 0;
    for (const n of await Promise.all(loads.map((l) => next<{ ready: number }>(l)))) ready += n.ready;
    while (!listener.connected) await new Promise((r) => setTimeout(r, 50));
    // Frames nobody measures, at the same rate: every LISTEN connection is up, the send path is warm, and the
    // start-up's garbage is collected (V8's memory reducer compacts the whole heap ~8 s after the first major GC).
    for (let i = 0; i < RATE * WARMUP_S; i++) {
      await publishDispatch(db, 'warm-up');
      await new Promise((r) => setTimeout(r, 1000 / RATE));
    }
    const before = new Map((await apis.metricsByProcess()).map((p) => [p.pid, p])); // also resets the loop monitors
    const started = performance.now();
    for (let i = 0; i < RATE * SECONDS; i++) {
      const due = started + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      await publishDispatch(db, `bench-${(performance.timeOrigin + performance.now()).toFixed(3)}`);
    }
    await new Promise((r) => setTimeout(r, 1000)); // let the last frames arrive
    const after = await apis.metricsByProcess();
    const answers = await Promise.all(
      loads.map(async (l) => {
        const answer = next<LoadResult>(l);
        l.send('stop');
        return answer;
      }),
    );
    const delays = answers.flatMap((a) => a.delays);
    const closed = answers.reduce((n, a) => n + a.closed, 0);
    const expected = ready * RATE * SECONDS;
    const p99 = percentile(delays, 99);
    const perProcess = after.map((p) => {
      const b = before.get(p.pid);
      const broadcasts = grew(p, b, 'svc_ws_fanout_seconds', '_count');
      const fanSum = grew(p, b, 'svc_ws_fanout_seconds', '_sum');
      const cpu = grew(p, b, 'svc_process_cpu_seconds_total');
      const gc = (kind: string) =>
        `${grew(p, b, GC, '_count', { kind })} ${kind} (${fmt(grew(p, b, GC, '_sum', { kind }) * 1000)} ms)`;
      return (
        `${sample(p, 'svc_ws_connections')} clients, fan-out mean ${fmt((fanSum / Math.max(1, broadcasts)) * 1000)} ms ` +
        `(${broadcasts} broadcasts), loop delay p99 ${fmt(sample(p, 'svc_nodejs_eventloop_lag_p99_seconds') * 1000)} ms ` +
        `max ${fmt(sample(p, 'svc_nodejs_eventloop_lag_max_seconds') * 1000)} ms, CPU ${fmt((cpu * 1000) / Math.max(1, broadcasts))} ms per broadcast, ` +
        `GC pauses: ${gc('major')}, ${gc('incremental')}, ${gc('minor')}`
      );
    });
    const pass = delays.length === expected && p99 <= GOAL_P99_MS;
    console.log(
      `\n${procs} API process(es), ${ready} clients in ${LOAD_PROCS} load process(es), ${RATE} frames/s for ${SECONDS} s: ` +
        `${delays.length}/${expected} frames received, ${closed} closed by the server (load ${os.loadavg()[0].toFixed(2)})`,
    );
    console.log(
      `  NOTIFY transit p50 ${fmt(percentile(transit, 50))} ms p99 ${fmt(percentile(transit, 99))} ms | ` +
        `load processes' event-loop delay p99 ${answers.map((a) => fmt(a.loop_p99_ms)).join('/')} ms max ${answers.map((a) => fmt(a.loop_max_ms)).join('/')} ms, ` +
        // Their CPU counts from the warm-up on.
        `CPU ${answers.map((a) => fmt(a.cpu_ms / (RATE * (SECONDS + WARMUP_S)))).join('/')} ms per broadcast`,
    );
    perProcess.forEach((line, i) => console.log(`  API process ${i + 1}: ${line}`));
    console.log(
      `  frame delay p50 ${fmt(percentile(delays, 50))} ms  p99 ${fmt(p99)} ms  max ${fmt(Math.max(...delays))} ms`,
    );
    return { procs, p99, pass };
  } finally {
    unlisten();
    // A load process told to stop ends by itself (and writes its profile, if asked); one that does not is killed.
    await Promise.all(
      loads.map(async (l) => {
        if (l.exitCode === null && l.signalCode === null)
          await new Promise((r) => setTimeout(r, 3000).unref() && l.once('exit', r));
        l.kill();
      }),
    );
    await listener.close();
    await apis.stop();
  }
}

async function main(): Promise<void> {
  const log = pino({ level: 'warn' });
  const cli = await findOrBuildTemporalCli({ log });
  if (cli.path === null) throw new Error(`no Temporal CLI: ${cli.attempts.join('; ')}`);
  // The API processes connect to Temporal at start (nothing here starts a workflow).
  const temporal = await startDevServer({ cli: cli.path, port: await freePort(), namespace: 'default', log });
  try {
    const database = await freshDatabase({
      base: process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432',
      prefix: 'svc_bench',
    });
    const db = await createDb({ url: database.url, maxConnections: 2 });
    const env = {
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: temporal.address,
      SVC_LOG_LEVEL: 'warn',
      SVC_LOG_FORMAT: 'json',
      // Every client comes from 127.0.0.1.
      SVC_MAX_CONNECTIONS_PER_ADDRESS: '0',
    } as const;
    try {
      const runs: RunResult[] = [];
      if (BASELINE) runs.push(await measure(1, env, db, database.url));
      const main = await measure(SERVER_PROCS, env, db, database.url);
      runs.push(main);
      console.log(`\n${runs.map((r) => `${r.procs} process(es): p99 ${fmt(r.p99)} ms`).join(' | ')}`);
      console.log(
        `${SERVER_PROCS} API process(es): p99 ≤ ${GOAL_P99_MS} ms and every frame delivered: ${main.pass ? 'PASS' : 'FAIL'}`,
      );
      if (!main.pass) process.exitCode = 1;
    } finally {
      await db.end();
      await database.drop();
    }
  } finally {
    await temporal.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
