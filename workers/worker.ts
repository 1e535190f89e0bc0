import { createDb } from '../activities/store/db';
import { ConfigError, parseConfig } from '../schema/config';
import { prepareDatabase } from './database';
import { createLogger } from './logger';
import { startBrowserWorkers } from './browser-worker';
import { ensureLiveSchedule, ensureRetentionSchedule } from './live-schedule';
import { connectClient, waitForSignal } from './runtime';
import { createRuntimeWorker, installTemporalLogging } from './runtime-worker';

/** Worker-only entry (`npm run worker`) for production: polls TEMPORAL_TASK_QUEUE on TEMPORAL_ADDRESS. */
async function main(): Promise<void> {
  const config = parseConfig(process.env);
  const log = createLogger(config, 'svc-worker');
  installTemporalLogging(log, 'INFO');
  // Never the PGlite fallback: a separate API or worker process must not open the same PGlite directory.
  const database = await prepareDatabase(config, log, { embeddedFallback: false });
  const db = await createDb({ url: database.url, maxConnections: database.maxConnections });
  const address = config.temporal.address ?? '127.0.0.1:7233';
  const { worker, connection } = await createRuntimeWorker({ config, db, log, address });
  log.info({ address, task_queue: config.temporal.taskQueue }, 'svc worker polling');
  const browser = await startBrowserWorkers({ config, db, log, address });
  const running = worker.run();
  const temporal = await connectClient(address, config.temporal.namespace);
  await ensureLiveSchedule(temporal.client, { taskQueue: config.temporal.taskQueue, log });
  await ensureRetentionSchedule(temporal.client, { taskQueue: config.temporal.taskQueue, log });
  await temporal.connection.close();
  await Promise.race([running, waitForSignal(log)]);
  // The SDK stops the worker on SIGINT/SIGTERM by itself; shutting a stopped worker down again throws.
  if (worker.getState() === 'RUNNING') worker.shutdown();
  await running;
  await browser?.stop();
  await connection.close();
  await db.end();
  await database.stop();
}

main().catch((err: Error) => {
  console.error(err instanceof ConfigError ? err.message : (err.stack ?? err.message));
  process.exitCode = 1;
  setTimeout(() => process.exit(1), 2000).unref();
});
