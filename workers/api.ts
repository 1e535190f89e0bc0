import { createDb } from '../activities/store/db';
import { ConfigError, parseConfig } from '../schema/config';
import { prepareDatabase } from './database';
import { createLogger } from './logger';
import { closeServer, connectClient, serveApi, waitForSignal } from './runtime';

/** API-only entry (`npm run api`) for production: talks to TEMPORAL_ADDRESS (default 127.0.0.1:7233). */
async function main(): Promise<void> {
  const config = parseConfig(process.env);
  const log = createLogger(config, 'svc-api');
  // Never the PGlite fallback: a separate API or worker process must not open the same PGlite directory.
  const database = await prepareDatabase(config, log, { embeddedFallback: false });
  const db = await createDb({ url: database.url, maxConnections: database.maxConnections });
  const temporal = await connectClient(config.temporal.address ?? '127.0.0.1:7233', config.temporal.namespace);
  const server = await serveApi({ config, db, log, temporal });
  log.info({ api: `http://${config.host}:${config.port}/v1` }, 'svc api ready');
  await waitForSignal(log);
  await closeServer(server);
  await temporal.connection.close();
  await db.end();
  await database.stop();
}

main().catch((err: Error) => {
  console.error(err instanceof ConfigError ? err.message : (err.stack ?? err.message));
  process.exitCode = 1;
  setTimeout(() => process.exit(1), 2000).unref();
});
