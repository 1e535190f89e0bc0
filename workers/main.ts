import path from 'node:path';
import { createModelRouter } from '../activities/providers';
import { createDb } from '../activities/store/db';
import { ConfigError, parseConfig } from '../schema/config';
import { prepareDatabase } from './database';
import { createLogger } from './logger';
import { closeServer, connectClient, createRuntimeWorker, installTemporalLogging, serveApi, waitForSignal } from './runtime';
import { startEmbeddedTemporal } from './temporal-dev';

/**
 * All-in-one entry (`npm start`): embedded Temporal dev server (unless TEMPORAL_ADDRESS is set),
 * the database (created and migrated; PGlite fallback), one worker and the API in one process.
 */
async function main(): Promise<void> {
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
    const dataDir = path.resolve(config.dataDir);
    const dev = await startEmbeddedTemporal({
      cliPath: config.temporal.cliPath,
      cacheDir: config.cacheDir,
      port: config.temporal.devPort,
      uiPort: config.temporal.uiPort,
      dbFile: path.join(dataDir, 'temporal.db'),
      logFile: path.join(dataDir, 'temporal.log'),
      namespace: config.temporal.namespace,
      log,
    });
    address = dev.address;
    uiUrl = dev.uiUrl;
    stops.unshift(() => dev.stop());
  }
  const temporal = await connectClient(address, config.temporal.namespace);
  stops.unshift(() => temporal.connection.close());

  const models = createModelRouter(config, { log });
  const { worker, connection } = await createRuntimeWorker({ config, db, log, address, models });
  const running = worker.run();
  stops.unshift(async () => {
    worker.shutdown();
    await running;
    await connection.close();
  });

  const server = await serveApi({ config, db, log, temporal, models });
  stops.unshift(() => closeServer(server));
  log.info(
    {
      api: `http://${config.host}:${config.port}/v1`,
      temporal: address,
      temporal_ui: uiUrl ?? 'external cluster',
      database: database.embedded ? 'embedded PGlite (development only)' : 'postgresql',
      startup_ms: Date.now() - started,
    },
    'svc runtime ready',
  );
  await waitForSignal(log);
  for (const stop of stops) await stop().catch((err: Error) => log.warn({ err: err.message }, 'shutdown step failed'));
}

main().catch((err: Error) => {
  console.error(err instanceof ConfigError ? err.message : (err.stack ?? err.message));
  process.exitCode = 1;
  setTimeout(() => process.exit(1), 2000).unref();
});
