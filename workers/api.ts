import cluster from 'node:cluster';
import { createDb } from '../activities/store/db';
import { ConfigError, parseConfig, type Config } from '../schema/config';
import { apiProcessCount, inApiCluster, reportApiReady, startApiProcesses } from './api-cluster';
import { prepareDatabase } from './database';
import { createLogger } from './logger';
import { closeServer, connectClient, serveApi, waitForSignal } from './runtime';
import { tuneV8ForServing } from './v8-flags';

/**
 * API-only entry (`npm run api`) for production: talks to TEMPORAL_ADDRESS (default 127.0.0.1:7233).
 * With SVC_API_PROCESSES > 1 this process becomes the primary of that many API processes sharing the port.
 */
async function main(): Promise<void> {
  tuneV8ForServing();
  const config = parseConfig(process.env);
  const count = apiProcessCount(config.apiProcesses);
  if (cluster.isPrimary && count > 1) await runPrimary(config, count);
  else await runApi(config);
}

/** Prepares the database once, then starts and supervises the API processes until SIGINT/SIGTERM. */
async function runPrimary(config: Config, count: number): Promise<void> {
  const log = createLogger(config, 'svc-api');
  const database = await prepareDatabase(config, log, { embeddedFallback: false });
  const processes = startApiProcesses({ count, log, env: { DATABASE_URL: database.url } });
  const signal = waitForSignal(log);
  try {
    await Promise.race([processes.ready, signal]);
    log.info({ api: `http://${config.host}:${config.port}/v1`, processes: count }, 'svc api ready');
    await signal;
  } finally {
    await processes.stop();
    await database.stop();
  }
}

/** One API process: serves alone, or as one of the primary's processes (which prepared the database). */
async function runApi(config: Config): Promise<void> {
  const inCluster = inApiCluster();
  const log = createLogger(config, 'svc-api');
  // Never the PGlite fallback: a separate API or worker process must not open the same PGlite directory.
  const database = inCluster
    ? { url: config.databaseUrl, maxConnections: 10, stop: async () => {} }
    : await prepareDatabase(config, log, { embeddedFallback: false });
  const db = await createDb({ url: database.url, maxConnections: database.maxConnections });
  const temporal = await connectClient(config.temporal.address ?? '127.0.0.1:7233', config.temporal.namespace);
  const server = await serveApi({ config, db, log, temporal, inCluster });
  if (inCluster) reportApiReady();
  else log.info({ api: `http://${config.host}:${config.port}/v1` }, 'svc api ready');
  await waitForSignal(log);
  await closeServer(server);
  await temporal.connection.close();
  await db.end();
  await database.stop();
  // The IPC channel to the primary keeps the process alive: let go of it (the primary sees a clean exit).
  cluster.worker?.disconnect();
}

main().catch((err: Error) => {
  console.error(err instanceof ConfigError ? err.message : (err.stack ?? err.message));
  process.exitCode = 1;
  setTimeout(() => process.exit(1), 2000).unref();
});
