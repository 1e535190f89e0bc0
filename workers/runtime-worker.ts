import path from 'node:path';
import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type LogLevel,
  type WorkerOptions,
} from '@temporalio/worker';
import type { Logger } from 'pino';
import { createActivities } from '../activities';
import type { ModelRouter } from '../activities/providers/types';
import type { Db } from '../activities/store/db';
import type { Config } from '../schema/config';
import type { WorkerTuning } from './worker-tuning';

// The worker's side of a process (`npm start`, `npm run worker`): apart from workers/runtime.ts so that an
// API-only process (`npm run api`, the API processes of a cluster) never loads the Temporal worker SDK, its
// native bridge or its workflow bundler (webpack): ~400 modules and ~5 MB of heap it would carry for nothing.

/**
 * Routes the Temporal SDK's own logs through our structured logger. Must run before the first
 * worker or native connection; a second call in the same process is a no-op.
 */
export function installTemporalLogging(log: Logger, level: LogLevel = 'WARN'): void {
  try {
    Runtime.install({
      logger: new DefaultLogger(level, (entry) => {
        const fields = { sdk: true, ...(entry.meta ?? {}) };
        if (entry.level === 'ERROR') log.error(fields, entry.message);
        else if (entry.level === 'WARN') log.warn(fields, entry.message);
        // The bundler's webpack statistics are dozens of lines for nobody but a debugging developer.
        else if (entry.message.startsWith('asset workflow-bundle')) log.debug(fields, entry.message);
        else log.info(fields, entry.message);
      }),
    });
  } catch {
    // Already installed in this process.
  }
}

/** Source or bundle of the workflows: production bundles from source at start; tests pass a prebuilt bundle. */
export function workflowSource(bundlePath?: string): Pick<WorkerOptions, 'workflowsPath' | 'workflowBundle'> {
  if (bundlePath) return { workflowBundle: { codePath: bundlePath } };
  return { workflowsPath: require.resolve(path.join(__dirname, '../workflows')) };
}

export async function createRuntimeWorker(opts: {
  config: Config;
  db: Db;
  log: Logger;
  address: string;
  taskQueue?: string;
  bundlePath?: string;
  /** The process's model router (shared with the API in the all-in-one process). */
  models?: ModelRouter;
  /** Activities registered beside the service's own (benchmarks' baselines); a name of ours cannot be replaced. */
  extraActivities?: Record<string, (...args: never[]) => Promise<unknown>>;
  /** Slot, poller and cache settings over the SDK defaults (the benches measure them; the service keeps the defaults). */
  tuning?: WorkerTuning;
}): Promise<{ worker: Worker; connection: NativeConnection }> {
  const connection = await NativeConnection.connect({ address: opts.address });
  const worker = await Worker.create({
    connection,
    namespace: opts.config.temporal.namespace,
    taskQueue: opts.taskQueue ?? opts.config.temporal.taskQueue,
    activities: {
      ...opts.extraActivities,
      ...createActivities({ config: opts.config, db: opts.db, log: opts.log, models: opts.models }),
    },
    // On SIGTERM, activities in flight get this long to finish before they are cancelled (and retried elsewhere).
    shutdownGraceTime: opts.config.workerShutdownGraceMs,
    ...workflowSource(opts.bundlePath),
    ...opts.tuning,
  });
  return { worker, connection };
}
