import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino, { type Logger } from 'pino';
import { Client, Connection } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { createDb, type Db } from '../../activities/store/db';
import { createTenant, mintKey } from '../../activities/store/keys';
import { ensureDatabase, runMigrations } from '../../activities/store/migrate';
import { cloneDatabase, dropDatabase } from './template-db';
import { randomToken } from '../../activities/store/ids';
import { createApp } from '../../api/app';
import { parseConfig, type Config } from '../../schema/config';
import { lazyModule } from '../../activities/lazy-module';

/**
 * The Temporal worker side (its SDK, native bridge and bundler), loaded when a harness first starts a worker:
 * the benches' API processes import this file for `freshDatabase` and stay as light as `npm run api`.
 */
export const workerSide = lazyModule(
  () => require('../../workers/runtime-worker') as typeof import('../../workers/runtime-worker'),
);

export const PG_BASE = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';

export function testEnv(): {
  temporalAddress: string;
  bundlePath: string;
  /** The run's migrated template database on `templateBase` (see template-db.ts). */
  templateDb?: string;
  templateBase?: string;
} {
  const file = process.env.SVC_TEST_ENV_FILE;
  if (!file)
    throw new Error('SVC_TEST_ENV_FILE is unset: run the tests through Jest (its global setup starts Temporal)');
  return JSON.parse(readFileSync(file, 'utf8'));
}

/** The run's template database when `base` is the server it lives on (Jest runs; benches migrate instead). */
function templateOn(base: string): string | null {
  if (!process.env.SVC_TEST_ENV_FILE) return null;
  const env = testEnv();
  return env.templateDb && env.templateBase === base ? env.templateDb : null;
}

/**
 * A fresh, migrated database for one test file (or benchmark run, with its own server and name prefix):
 * a copy of the run's template database when there is one, else created and migrated here.
 */
export async function freshDatabase(
  opts: { base?: string; prefix?: string } = {},
): Promise<{ url: string; drop(): Promise<void> }> {
  const base = opts.base ?? PG_BASE;
  // The creating process's pid is in the name, so a later run drops it only once that process is gone.
  const name = `${opts.prefix ?? 'svc_test'}_${process.pid}_${randomToken(10)}`;
  const url = `${base}/${name}`;
  const template = templateOn(base);
  if (template) await cloneDatabase(base, template, name);
  else {
    await ensureDatabase(url);
    await runMigrations(url);
  }
  return { url, drop: () => dropDatabase(base, name) };
}

/** The field paths an error answer names (`details[].path`), in order: what a refusal is checked by. */
export const fields = (res: { body: { details?: Array<{ path: string }> } }): string[] =>
  (res.body.details ?? []).map((d) => d.path);

export interface Harness {
  url: string;
  config: Config;
  db: Db;
  dbUrl: string;
  client: Client;
  connection: Connection;
  taskQueue: string;
  worker?: Worker;
  /** Mints a key in a new (or given) tenant. */
  key(
    scopes: string[],
    opts?: { tenantId?: string; kind?: 'runtime' | 'legacy' | 'bootstrap' },
  ): Promise<{ apiKey: string; keyId: string; tenantId: string }>;
  /** fetch against the app with optional bearer key. */
  req(
    method: string,
    p: string,
    opts?: { key?: string; body?: unknown; headers?: Record<string, string>; raw?: string },
  ): Promise<{ status: number; body: any; headers: Headers; text: string }>;
  close(): Promise<void>;
}

/**
 * Starts the real app on a random port against a fresh PostgreSQL database and the shared
 * Temporal dev server; with `worker: true` also a worker on its own task queue.
 */
export async function startHarness(opts: { worker?: boolean; env?: Record<string, string> } = {}): Promise<Harness> {
  const env = testEnv();
  const database = await freshDatabase();
  const taskQueue = `test-${randomToken(10)}`;
  const config = parseConfig({
    DATABASE_URL: database.url,
    TEMPORAL_ADDRESS: env.temporalAddress,
    TEMPORAL_TASK_QUEUE: taskQueue,
    SVC_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    SVC_REGISTRATION_TOKEN: 'test-registration-token',
    // Restart and crash tests stop workers mid-activity on purpose: no grace period unless a test asks for one.
    SVC_WORKER_SHUTDOWN_GRACE_MS: '0',
    ...opts.env,
  });
  const log = pino({ level: config.logLevel });
  workerSide().installTemporalLogging(pino({ level: process.env.TEST_LOG_LEVEL ?? 'error' }));
  const db = await createDb({ url: database.url, maxConnections: 5 });
  // Generous: on a loaded 2-core machine the first connect can take several seconds.
  const connection = await Connection.connect({ address: env.temporalAddress, connectTimeout: '60 seconds' });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const app = createApp({ config, db, log, temporal: { connection, client } });
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const queueWorker = opts.worker ? await startQueueWorker({ config, db, taskQueue }, log) : undefined;

  return {
    url,
    config,
    db,
    dbUrl: database.url,
    client,
    connection,
    taskQueue,
    worker: queueWorker?.worker,
    async key(scopes, o = {}) {
      const tenantId = o.tenantId ?? (await createTenant(db));
      return mintKey(db, { tenantId, kind: o.kind ?? 'runtime', scopes });
    },
    async req(method, p, o = {}) {
      const headers: Record<string, string> = { ...(o.headers ?? {}) };
      if (o.key) headers.authorization = `Bearer ${o.key}`;
      let body: string | undefined = o.raw;
      if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(url + p, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = undefined;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: res.status, body: parsed, headers: res.headers, text };
    },
    async close() {
      await queueWorker?.stop();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
      await connection.close();
      await db.end();
      await database.drop();
    },
  };
}

/** A worker on the harness's task queue that the test starts and stops itself (restart and crash tests). */
export interface QueueWorker {
  worker: Worker;
  running: Promise<void>;
  /** Graceful shutdown (in-flight activities are told WORKER_SHUTDOWN), then the connection closes. */
  stop(): Promise<void>;
}

export async function startQueueWorker(
  h: Pick<Harness, 'config' | 'db' | 'taskQueue'>,
  log: Logger = pino({ level: 'silent' }),
): Promise<QueueWorker> {
  const env = testEnv();
  const { worker, connection } = await workerSide().createRuntimeWorker({
    config: h.config,
    db: h.db,
    log,
    address: env.temporalAddress,
    taskQueue: h.taskQueue,
    bundlePath: env.bundlePath,
  });
  const running = worker.run();
  return {
    worker,
    running,
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await connection.close();
    },
  };
}
