import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { sql } from 'slonik';
import { z } from 'zod';
import { Client, Connection } from '@temporalio/client';
import { tsToMs } from '@temporalio/common';
import type { AppDeps } from '../api/deps';
import type { ActivityDeps } from '../activities/deps';
import { createDb, type Db } from '../activities/store/db';
import { createTenant, mintKey } from '../activities/store/keys';
import { randomToken } from '../activities/store/ids';
import { lazyModule } from '../activities/lazy-module';
import { createApp } from '../api/app';
import { createGateway } from '../api/gateway';
import { parseConfig, type Config } from '../schema/config';
import { freshDatabase, workerSide } from '../test/helpers/harness';
import { DEV_SERVER_DYNAMIC_CONFIG, findOrBuildTemporalCli, freePort, startDevServer } from '../workers/temporal-dev';
import { WORKER_TUNING_KEYS, type WorkerTuning } from '../workers/worker-tuning';

/**
 * The workflow bundler, loaded by `startBenchStack` (with the harness's `workerSide`): the gateway bench's
 * server processes import this file for `startBenchApp` and stay as light as `npm run api`.
 */
const bundler = lazyModule(
  () => (require('@temporalio/worker') as typeof import('@temporalio/worker')).bundleWorkflowCode,
);

/** Deterministic PRNG (mulberry32): the same seed gives the same sequence in [0, 1). */
export function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function percentile(samples: number[], p: number): number {
  if (!samples.length) return NaN;
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

export const fmt = (ms: number) => (ms < 1 ? ms.toFixed(3) : ms < 100 ? ms.toFixed(2) : ms.toFixed(0));

export interface BenchApp {
  url: string;
  db: Db;
  config: Config;
  /** The app's Temporal clients (startBenchStack adds the worker's `eager` one, as `npm start` does). */
  temporal: AppDeps['temporal'];
  key(scopes: string[]): Promise<string>;
  close(): Promise<void>;
}

/**
 * The real app on a random loopback port against a fresh PostgreSQL database (dropped at
 * close). `env` adds configuration; Temporal is connected lazily at TEMPORAL_ADDRESS if given.
 */
export async function startBenchApp(env: Record<string, string> = {}): Promise<BenchApp> {
  const database = await freshDatabase({
    base: process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432',
    prefix: 'svc_bench',
  });
  const dbUrl = database.url;
  const config = parseConfig({ DATABASE_URL: dbUrl, SVC_LOG_LEVEL: 'silent', ...env });
  // BENCH_DB_POOL: the pool size to measure with (default 10, what workers/database.ts gives the service).
  const db = await createDb({ url: dbUrl, maxConnections: Number(process.env.BENCH_DB_POOL ?? 10) });
  const connection = Connection.lazy({ address: config.temporal.address ?? '127.0.0.1:7233' });
  const deps = {
    config,
    db,
    log: pino({ level: 'silent' }),
    temporal: { connection, client: new Client({ connection }) },
  };
  const gateway = createGateway(deps);
  const app = createApp({ ...deps, gateway });
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    db,
    config,
    temporal: deps.temporal,
    key: async (scopes) => (await mintKey(db, { tenantId: await createTenant(db), kind: 'runtime', scopes })).apiKey,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await gateway.close();
      await connection.close().catch(() => {});
      await db.end();
      await database.drop();
    },
  };
}

/**
 * Dynamic config the bench's dev server gets on top of ours (`DEV_SERVER_DYNAMIC_CONFIG`), as JSON in
 * BENCH_TEMPORAL_CONFIG; e.g. `{"history.transferProcessorMaxPollRPS":20}` measures against the
 * server's stock read rate (what the figures before the durable-path third pass ran on). Printed,
 * so a run's output says which server it measured.
 */
function benchTemporalConfig(): Record<string, unknown> {
  const extra = process.env.BENCH_TEMPORAL_CONFIG ? (JSON.parse(process.env.BENCH_TEMPORAL_CONFIG) as object) : {};
  console.log(`Temporal dev server dynamic config: ${JSON.stringify({ ...DEV_SERVER_DYNAMIC_CONFIG, ...extra })}`);
  return { ...extra };
}

/**
 * Worker settings over the SDK defaults, as JSON in BENCH_WORKER_OPTIONS (e.g.
 * `{"maxConcurrentActivityTaskPolls":2}`), for measuring them; the service runs the defaults. The raw
 * baselines run on the same worker, so a setting moves both paths. Printed, so a run's output says what
 * it measured; an unknown key stops the bench.
 */
function benchWorkerTuning(): WorkerTuning {
  const given: unknown = process.env.BENCH_WORKER_OPTIONS ? JSON.parse(process.env.BENCH_WORKER_OPTIONS) : {};
  if (typeof given !== 'object' || given === null || Array.isArray(given))
    throw new Error('BENCH_WORKER_OPTIONS: give a JSON object of worker settings');
  const unknown = Object.keys(given).filter((k) => !(WORKER_TUNING_KEYS as readonly string[]).includes(k));
  if (unknown.length) throw new Error(`BENCH_WORKER_OPTIONS: not a worker tuning setting: ${unknown.join(', ')}`);
  console.log(`Worker settings over the SDK defaults: ${JSON.stringify(given)}`);
  return given as WorkerTuning;
}

export interface BenchStack {
  app: BenchApp;
  /** A client of the dev server, for the raw-workflow baseline. */
  client: Client;
  taskQueue: string;
  /** Process id of the dev server (CPU accounting, see `cpuSnapshot`). */
  temporalPid?: number;
  /** Stops the worker, the connections, the app (dropping its database) and the dev server. */
  close(): Promise<void>;
}

/** CPU milliseconds (user + system) a process has used so far, from /proc (0 when unreadable). */
function procCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime, stime in clock ticks (CLK_TCK 100)
  } catch {
    return 0;
  }
}

/** CPU used so far by this process, the bench database's PostgreSQL backends and the dev server (ms), and the database's transactions. */
export interface CpuSnapshot {
  bench: number;
  pg: number;
  temporal: number;
  xacts: number;
}

/**
 * A CPU and transaction reading for a breakdown (not a timing): take one before and one after a
 * measured batch. The transaction count comes from pg_stat_database, which backends flush about
 * once a second, so the reading after a batch waits 1.2 s first (`settle`).
 */
export async function cpuSnapshot(stack: BenchStack, settle = false): Promise<CpuSnapshot> {
  if (settle) await new Promise((r) => setTimeout(r, 1200));
  const bench = process.cpuUsage();
  const r = await stack.app.db.one(sql.type(z.object({ pids: z.array(z.number()), xacts: z.number() }))`
    SELECT (SELECT coalesce(array_agg(pid), '{}') FROM pg_stat_activity WHERE datname = current_database()) AS pids,
      (SELECT (xact_commit + xact_rollback)::int8 FROM pg_stat_database WHERE datname = current_database()) AS xacts`);
  return {
    bench: (bench.user + bench.system) / 1000,
    pg: r.pids.reduce((n, pid) => n + procCpuMs(pid), 0),
    temporal: stack.temporalPid ? procCpuMs(stack.temporalPid) : 0,
    xacts: r.xacts,
  };
}

/** Per unit (e.g. per step) between two snapshots. */
export function cpuPer(a: CpuSnapshot, b: CpuSnapshot, units: number): CpuSnapshot {
  return {
    bench: (b.bench - a.bench) / units,
    pg: (b.pg - a.pg) / units,
    temporal: (b.temporal - a.temporal) / units,
    xacts: (b.xacts - a.xacts) / units,
  };
}

/**
 * What a workflow benchmark runs against: a Temporal dev server, the bench app using it (`env`
 * added), the workflows at `workflowsPath` bundled and run by a runtime worker on a fresh task
 * queue, and a Temporal client.
 */
export async function startBenchStack(opts: BenchStackOptions): Promise<BenchStack> {
  try {
    return await startStack(opts);
  } catch (err) {
    // A peer left open would keep the process running after the error is printed.
    await Promise.allSettled((opts.peers ?? []).map((p) => p.close()));
    throw err;
  }
}

interface BenchStackOptions {
  workflowsPath: string;
  env?: Record<string, string>;
  /** Baseline activities for the bench's raw workflows, registered on the same worker as ours. */
  extraActivities?: (deps: ActivityDeps) => Record<string, (...args: never[]) => Promise<unknown>>;
  /** Local peers the bench started first (fake upstreams, page or SMTP servers): closed when the stack fails to start. */
  peers?: Array<{ close(): Promise<unknown> }>;
}

async function startStack(opts: BenchStackOptions): Promise<BenchStack> {
  // Checked before anything starts: a wrong setting stops the bench at once, with nothing left running.
  const tuning = benchWorkerTuning();
  const log = pino({ level: 'warn' });
  const { installTemporalLogging, createRuntimeWorker } = workerSide();
  const bundleWorkflowCode = bundler();
  installTemporalLogging(log);
  const cli = await findOrBuildTemporalCli({ log });
  if (cli.path === null) throw new Error(`no Temporal CLI: ${cli.attempts.join('; ')}`);
  const temporal = await startDevServer({
    cli: cli.path,
    port: await freePort(),
    namespace: 'default',
    log,
    dynamicConfig: benchTemporalConfig(),
  });
  const taskQueue = `bench-${randomToken(6)}`;
  const app = await startBenchApp({ ...opts.env, TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: taskQueue });
  const { code } = await bundleWorkflowCode({
    workflowsPath: opts.workflowsPath,
    logger: { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } as never,
  });
  const bundlePath = path.join(os.tmpdir(), `svc-bench-bundle-${randomToken(6)}.js`);
  writeFileSync(bundlePath, code);
  const { worker, connection } = await createRuntimeWorker({
    config: app.config,
    db: app.db,
    log,
    address: temporal.address,
    taskQueue,
    bundlePath,
    extraActivities: opts.extraActivities?.({ config: app.config, db: app.db, log }),
    tuning,
  });
  const running = worker.run();
  // As in `npm start` (workers/main.ts): the API starts workflows through the worker's connection, eagerly.
  app.temporal.eager = new Client({ connection, namespace: app.config.temporal.namespace });
  const clientConn = await Connection.connect({ address: temporal.address });
  return {
    app,
    client: new Client({ connection: clientConn }),
    taskQueue,
    temporalPid: temporal.child.pid,
    close: async () => {
      worker.shutdown();
      await running;
      await connection.close();
      await clientConn.close();
      await app.close();
      await temporal.stop();
    },
  };
}

/** Wall-clock milliseconds (comparable with Temporal's event times on the same machine). */
export const wallMs = () => performance.timeOrigin + performance.now();

/** Samples per phase name (ms). */
export type Phases = Record<string, number[]>;

const push = (into: Phases, phase: string, ms: number) => (into[phase] ??= []).push(ms);

/**
 * Where a workflow's time went, from its history (the server's event times): per activity the
 * dispatch (scheduled → started) and the run (started → completed), the wait from an activity's
 * completion to the workflow task that handles it, and each workflow task (started → completed;
 * those that ran local activities apart). With `calls` (one per run, or one per update in order when
 * `perUpdate`, the latest run's updates matched with the last calls), also the client's side: call
 * start → the first event of the run (or the update's workflow task), and the run's (update's) last
 * event → the answer.
 */
export async function addHistoryPhases(
  client: Client,
  workflowId: string,
  into: Phases,
  calls: Array<{ start: number; end: number }> = [],
  perUpdate = false,
): Promise<void> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const at = (i: number) => tsToMs(events[i].eventTime);
  // The latest run's history (a workflow that continued as new): its updates are the last calls.
  if (perUpdate) calls = calls.slice(-events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length);
  const scheduled = new Map<number, number>();
  const started = new Map<number, number>();
  let completedAt: number | null = null;
  let wftStarted: number | null = null;
  let wftScheduled: number | null = null;
  let update = 0;
  events.forEach((e, i) => {
    const t = at(i);
    if (e.activityTaskScheduledEventAttributes) scheduled.set(Number(e.eventId), t);
    const s = e.activityTaskStartedEventAttributes;
    if (s) {
      started.set(Number(s.scheduledEventId), t);
      push(into, 'activity dispatch', t - scheduled.get(Number(s.scheduledEventId))!);
    }
    const c = e.activityTaskCompletedEventAttributes;
    if (c) {
      push(into, 'activity run', t - started.get(Number(c.scheduledEventId))!);
      completedAt = t;
    }
    if (e.workflowTaskScheduledEventAttributes) wftScheduled = t;
    if (e.workflowTaskStartedEventAttributes) {
      wftStarted = t;
      if (completedAt !== null) push(into, 'activity done → workflow task', t - completedAt);
      completedAt = null;
    }
    if (e.workflowTaskCompletedEventAttributes && wftStarted !== null)
      push(
        into,
        events[i + 1]?.markerRecordedEventAttributes ? 'workflow task with local activities' : 'workflow task',
        t - wftStarted,
      );
    if (perUpdate && e.workflowExecutionUpdateAcceptedEventAttributes && calls[update] && wftScheduled !== null)
      push(into, 'call → workflow task', wftScheduled - calls[update].start);
    if (perUpdate && e.workflowExecutionUpdateCompletedEventAttributes && calls[update])
      push(into, 'last event → answer', calls[update++].end - t);
  });
  if (!perUpdate && calls[0] && events.length) {
    push(into, 'call → first event', at(0) - calls[0].start);
    push(into, 'last event → answer', calls[0].end - at(events.length - 1));
  }
}

/** One line per phase: p50 of each path's samples, side by side. */
export function printPhases(paths: Record<string, Phases>): void {
  const names = [...new Set(Object.values(paths).flatMap((p) => Object.keys(p)))];
  console.log(`| phase (p50 ms, from workflow histories) | ${Object.keys(paths).join(' | ')} |`);
  console.log(
    `|---|${Object.keys(paths)
      .map(() => '---')
      .join('|')}|`,
  );
  for (const n of names)
    console.log(
      `| ${n} | ${Object.values(paths)
        .map((p) => (p[n]?.length ? `${fmt(percentile(p[n], 50))} (n=${p[n].length})` : '-'))
        .join(' | ')} |`,
    );
}
