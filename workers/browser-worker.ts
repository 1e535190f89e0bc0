import { hostname } from 'node:os';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createBrowserWorkerActivities } from '../activities/browser/activities';
import { browserQueue, chromiumMissing } from '../activities/browser/availability';
import { BrowserHost } from '../activities/browser/host';
import type { Db } from '../activities/store/db';
import { randomToken } from '../activities/store/ids';
import type { Config } from '../schema/config';
import { workflowIds } from '../schema/workflow-ids';
import { browserTouchedSignal } from '../workflows/browser-defs';
import { startDirectServer } from './browser-direct';
import { startBrowserReport } from './browser-report';

export interface BrowserWorkers {
  workerId: string;
  host: BrowserHost;
  running: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts this process's browser workers: one on the shared browser queue (opens and recovers
 * sessions) and one on this worker's own queue (runs the commands of the sessions it holds).
 * Returns undefined, with a log line saying why, when Chromium is absent and SVC_BROWSER is auto.
 * @throws Error when SVC_BROWSER is on and Chromium is missing
 */
export async function startBrowserWorkers(o: {
  config: Config;
  db: Db;
  log: Logger;
  address: string;
  taskQueue?: string;
}): Promise<BrowserWorkers | undefined> {
  const why = chromiumMissing(o.config);
  if (why) {
    if (o.config.browser.mode === 'on') throw new Error(`SVC_BROWSER=on but ${why}`);
    o.log.info({ reason: why }, 'browser worker not started');
    return undefined;
  }
  const base = o.taskQueue ?? o.config.temporal.taskQueue;
  const workerId = `${hostname()}-${process.pid}-${randomToken(6)}`;
  const ownQueue = `${browserQueue(base)}-${workerId}`;
  const policy = { allowPrivate: o.config.allowPrivateFetch, allowHosts: o.config.browser.allowHosts };
  const host = new BrowserHost({
    chromiumPath: o.config.browser.chromiumPath,
    policy,
    maxSessions: o.config.browser.maxSessionsPerWorker,
    log: o.log,
  });
  const connection = await NativeConnection.connect({ address: o.address });
  const namespace = o.config.temporal.namespace;
  const client = new Client({ connection, namespace });
  const activities = createBrowserWorkerActivities({
    host,
    deps: { config: o.config, db: o.db, log: o.log },
    workerId,
    queue: ownQueue,
    policy,
    touch: (sessionId, touch) =>
      client.workflow.getHandle(workflowIds.browser(sessionId)).signal(browserTouchedSignal, touch),
  });
  const shared = await Worker.create({
    connection,
    namespace,
    taskQueue: browserQueue(base),
    activities: { browserAcquire: activities.browserAcquire },
    maxConcurrentActivityTaskExecutions: 2,
  });
  const own = await Worker.create({
    connection,
    namespace,
    taskQueue: ownQueue,
    activities: {
      browserCommand: activities.browserCommand,
      browserRelease: activities.browserRelease,
      browserPing: activities.browserPing,
    },
    maxConcurrentActivityTaskExecutions: Math.max(4, o.config.browser.maxSessionsPerWorker * 2),
  });
  // The command endpoint is reported before the workers poll, so the first session it opens already has it.
  const direct = o.config.browser.direct
    ? await startDirectServer({
        host: o.config.browser.workerHost,
        port: o.config.browser.workerPort,
        advertise: o.config.browser.workerAdvertise,
        log: o.log,
        run: activities.direct,
      })
    : undefined;
  const report = await startBrowserReport({
    db: o.db,
    log: o.log,
    host,
    workerId,
    chromiumPath: o.config.browser.chromiumPath,
    everyMs: (o.config.browser.heartbeatS || 15) * 1000,
    endpoint: direct?.endpoint,
    token: direct?.token,
  });
  const running = Promise.all([shared.run(), own.run()]).then(() => undefined);
  o.log.info({ worker_id: workerId, queue: ownQueue, endpoint: direct?.endpoint }, 'browser worker polling');
  return {
    workerId,
    host,
    running,
    async stop() {
      await report.stop();
      await direct?.close();
      for (const w of [shared, own]) if (w.getState() === 'RUNNING') w.shutdown();
      await running.catch(() => undefined);
      await host.shutdown();
      await connection.close();
    },
  };
}
