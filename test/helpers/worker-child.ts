/**
 * A Temporal worker in its own process, so that a test can kill it for real (SIGKILL: no graceful
 * shutdown, no activity cancellation, connections simply vanish). Run without a build:
 *   node -r ./test/helpers/ts-register.js test/helpers/worker-child.ts
 * Environment: DATABASE_URL, TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE, OPENAI_BASE_URL (the usual
 * config) and WORKFLOW_BUNDLE_PATH (the prebuilt bundle of the test run). Prints WORKER_READY
 * once it polls.
 */
import pino from 'pino';
import { createDb } from '../../activities/store/db';
import { parseConfig } from '../../schema/config';
import { createRuntimeWorker, installTemporalLogging } from '../../workers/runtime-worker';

async function main(): Promise<void> {
  const config = parseConfig(process.env);
  const log = pino({ level: config.logLevel });
  installTemporalLogging(pino({ level: 'error' }));
  const address = process.env.TEMPORAL_ADDRESS;
  if (!address) throw new Error('TEMPORAL_ADDRESS is required');
  const db = await createDb({ url: config.databaseUrl, maxConnections: 5 });
  const { worker } = await createRuntimeWorker({
    config,
    db,
    log,
    address,
    taskQueue: config.temporal.taskQueue,
    bundlePath: process.env.WORKFLOW_BUNDLE_PATH,
  });
  const running = worker.run();
  process.stdout.write('WORKER_READY\n');
  await running;
}

main().catch((err: Error) => {
  // Rethrown outside the promise: an uncaught exception ends the process with code 1 (open pools or not).
  setImmediate(() => {
    throw err;
  });
});
