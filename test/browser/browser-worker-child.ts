/**
 * A browser worker alone in its own process, so that a test can kill it for real (SIGKILL).
 * Environment: DATABASE_URL, TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE and the browser settings.
 * Prints BROWSER_WORKER_READY <worker id> once it polls.
 */
import pino from 'pino';
import { createDb } from '../../activities/store/db';
import { parseConfig } from '../../schema/config';
import { startBrowserWorkers } from '../../workers/browser-worker';
import { installTemporalLogging } from '../../workers/runtime-worker';

async function main(): Promise<void> {
  const config = parseConfig(process.env);
  installTemporalLogging(pino({ level: 'error' }));
  const db = await createDb({ url: config.databaseUrl, maxConnections: 3 });
  const bw = await startBrowserWorkers({
    config,
    db,
    log: pino({ level: config.logLevel }),
    address: config.temporal.address ?? '',
  });
  if (!bw) throw new Error('browser worker not started');
  process.stdout.write(`BROWSER_WORKER_READY ${bw.workerId}\n`);
  await bw.running;
}

main().catch((err: Error) => {
  setImmediate(() => {
    throw err;
  });
});
