import { Client } from '@temporalio/client';
import { createModelRouter } from '../activities/providers';
import { createDb } from '../activities/store/db';
import { ConfigError, parseConfig } from '../schema/config';
import { prepareDatabase } from './database';
import { createLogger } from './logger';
import { startBrowserWorkers } from './browser-worker';
import { ensureLiveSchedule, ensureRetentionSchedule } from './live-schedule';
import { closeServer, connectClient, serveApi, waitForSignal } from './runtime';
import { createRuntimeWorker, installTemporalLogging } from './runtime-worker';
import { mintDevKey, readyBanner, type ReadyInfo } from './ready-banner';
import { startConfiguredTemporal } from './temporal-dev';
import { tuneV8ForServing } from './v8-flags';

/**
 * All-in-one entry (`npm start`): embedded Temporal dev server (unless TEMPORAL_ADDRESS is set),
 * the database (created and migrated; PGlite fallback), one worker and the API in one process.
 */
async function main(): Promise<void> {
  // The API runs in this process: the same V8 settings as `npm run api` (no compacting memory-reducer pauses).
  tuneV8ForServing();
  const config = parseConfig(process.env);
  const log = createLogger(config);
  installTemporalLogging(log, 'INFO');
  const started = Date.now();
  const stops: Array<() => Promise<unknown>> = [];

  const database = await prepareDatabase(config, log, { embeddedFallback: true });
  stops.unshift(() => database.stop());
  const db = await createDb({ url: database.url, maxConnections: database.maxConnections });
  stops.unshift(() => db.end());

  let address = config.temporal.address;
  let uiUrl: string | undefined;
  if (!address) {
    const dev = await startConfiguredTemporal(config, log);
    address = dev.address;
    uiUrl = dev.uiUrl;
    stops.unshift(() => dev.stop());
  }
  const temporal = await connectClient(address, config.temporal.namespace);
  stops.unshift(() => temporal.connection.close());

  const models = createModelRouter(config, { log });
  const { worker, connection } = await createRuntimeWorker({ config, db, log, address, models });
  const running = worker.run();
  await ensureLiveSchedule(temporal.client, { taskQueue: config.temporal.taskQueue, log });
  await ensureRetentionSchedule(temporal.client, { taskQueue: config.temporal.taskQueue, log });
  stops.unshift(async () => {
    // The SDK stops the worker on SIGINT/SIGTERM by itself; shutting a stopped worker down again throws.
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
    await connection.close();
  });

  const browser = await startBrowserWorkers({ config, db, log, address });
  if (browser) stops.unshift(() => browser.stop());

  // The API starts workflows through the worker's own connection: Eager Workflow Start (api/start-workflow.ts).
  const eager = new Client({ connection, namespace: config.temporal.namespace });
  const server = await serveApi({ config, db, log, temporal: { ...temporal, eager }, models });
  stops.unshift(() => closeServer(server));
  const devKey =
    config.devKey || process.argv.includes('--dev-key') ? await mintDevKey({ db, host: config.host, log }) : undefined;
  const ready: ReadyInfo = {
    apiUrl: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}/v1`,
    temporalAddress: address,
    temporalUiUrl: uiUrl,
    namespace: config.temporal.namespace,
    database: database.embedded ? 'embedded PGlite (development only)' : redactUrl(database.url),
    startupMs: Date.now() - started,
    devKey,
  };
  const { devKey: _secret, ...loggable } = ready;
  log.info({ ...loggable, dev_key_minted: devKey !== undefined }, 'svc runtime ready');
  // For a person: the banner goes to the terminal only; logs and collectors get the line above (no key in them).
  if (process.stdout.isTTY) process.stdout.write(`\n${readyBanner(ready)}\n`);
  else if (devKey) process.stdout.write(`dev key: ${devKey.apiKey}\n`);
  await waitForSignal(log);
  for (const stop of stops) await stop().catch((err: Error) => log.warn({ err: err.message }, 'shutdown step failed'));
}

/** A database URL without its password, for the banner. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgresql';
  }
}

main().catch((err: Error) => {
  console.error(err instanceof ConfigError ? err.message : (err.stack ?? err.message));
  process.exitCode = 1;
  setTimeout(() => process.exit(1), 2000).unref();
});
