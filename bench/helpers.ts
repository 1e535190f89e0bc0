import { writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { createDb, type Db } from '../activities/store/db';
import { createTenant, mintKey } from '../activities/store/keys';
import { randomToken } from '../activities/store/ids';
import { createApp } from '../api/app';
import { createGateway } from '../api/gateway';
import { parseConfig, type Config } from '../schema/config';
import { freshDatabase } from '../test/helpers/harness';
import { createRuntimeWorker, installTemporalLogging } from '../workers/runtime';
import { DEV_SERVER_DYNAMIC_CONFIG, findOrBuildTemporalCli, freePort, startDevServer } from '../workers/temporal-dev';

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

export interface BenchStack {
  app: BenchApp;
  /** A client of the dev server, for the raw-workflow baseline. */
  client: Client;
  taskQueue: string;
  /** Stops the worker, the connections, the app (dropping its database) and the dev server. */
  close(): Promise<void>;
}

/**
 * What a workflow benchmark runs against: a Temporal dev server, the bench app using it (`env`
 * added), the workflows at `workflowsPath` bundled and run by a runtime worker on a fresh task
 * queue, and a Temporal client.
 */
export async function startBenchStack(opts: {
  workflowsPath: string;
  env?: Record<string, string>;
}): Promise<BenchStack> {
  const log = pino({ level: 'warn' });
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
  });
  const running = worker.run();
  const clientConn = await Connection.connect({ address: temporal.address });
  return {
    app,
    client: new Client({ connection: clientConn }),
    taskQueue,
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
