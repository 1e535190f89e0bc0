import http from 'node:http';
import { Client, Connection } from '@temporalio/client';
import type { Logger } from 'pino';
import { createModelRouter } from '../activities/providers';
import type { ModelRouter } from '../activities/providers/types';
import { createEventListener } from '../activities/store/event-listener';
import type { Db } from '../activities/store/db';
import type { AppDeps } from '../api/deps';
import { createApp } from '../api/app';
import { createLifecycle, type Lifecycle } from '../api/lifecycle';
import { attachLiveSocket } from '../api/live/socket';
import { createHttpServer } from '../api/http-server';
import { createGateway } from '../api/gateway';
import type { Config } from '../schema/config';
import { joinApiProcesses } from './api-cluster';

export async function connectClient(
  address: string,
  namespace: string,
): Promise<{ connection: Connection; client: Client }> {
  const connection = await Connection.connect({ address, connectTimeout: '30 seconds' });
  return { connection, client: new Client({ connection, namespace }) };
}

/** What closeServer runs after the server stopped (flush usage, close the LISTEN connections). */
const serverCleanups = new WeakMap<http.Server, () => Promise<void>>();

export async function serveApi(opts: {
  config: Config;
  db: Db;
  log: Logger;
  temporal: AppDeps['temporal'];
  models?: ModelRouter;
  /** One of several API processes on one port (workers/api-cluster.ts): /v1/metrics sums every process's. */
  inCluster?: boolean;
}): Promise<http.Server> {
  const base = { config: opts.config, db: opts.db, log: opts.log, temporal: opts.temporal };
  // Built once per process and owned here: the router, the gateway (caches, limits, usage) and the
  // LISTEN client of event streams; both connections close with the server.
  const models = opts.models ?? createModelRouter(opts.config, { log: opts.log });
  const gateway = createGateway(base, { keepListening: true });
  const listener = createEventListener({ url: opts.config.databaseUrl, log: opts.log });
  const lifecycle = createLifecycle();
  const app = createApp({ ...base, models, gateway, listener, lifecycle });
  if (opts.inCluster) app.context.metrics.exposition = joinApiProcesses(app.context.metrics.registry);
  const server = createHttpServer(app, opts.config, opts.log);
  const live = attachLiveSocket(server, app);
  server.once('close', () => void live.close());
  lifecycle.onDrain(() => void live.close());
  serverCleanups.set(server, async () => {
    await gateway.close();
    await listener.close();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.config.port, opts.config.host, () => resolve());
  });
  lifecycles.set(server, lifecycle);
  return server;
}

const lifecycles = new WeakMap<http.Server, Lifecycle>();

/**
 * Graceful stop of an API server: no new connections; SSE streams end with a retry hint (clients resume
 * elsewhere with Last-Event-ID) and WebSockets close with 1001 (going away); requests in flight get up to
 * `graceMs` to finish, idle keep-alive connections close at once; whatever is left after that is cut.
 */
export async function closeServer(server: http.Server, graceMs = 10_000): Promise<void> {
  lifecycles.get(server)?.drain();
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    // Streams that just ended leave idle keep-alive sockets behind: close them as they appear.
    const idle = setInterval(() => server.closeIdleConnections(), 100);
    timer.unref();
    idle.unref();
    server.close(() => {
      clearTimeout(timer);
      clearInterval(idle);
      resolve();
    });
    server.closeIdleConnections();
  });
  await serverCleanups.get(server)?.();
}

export function waitForSignal(log: Logger): Promise<void> {
  return new Promise((resolve) => {
    const onSignal = (signal: string) => {
      log.info({ signal }, 'shutting down');
      resolve();
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  });
}
