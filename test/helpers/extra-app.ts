import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Client, Connection } from '@temporalio/client';
import { createApp } from '../../api/app';
import type { AppDeps } from '../../api/deps';
import { freePort } from '../../workers/temporal-dev';
import type { RouteSpec } from '../../api/route';
import type { Config } from '../../schema/config';
import type { Harness } from './harness';

export interface ExtraApp {
  url: string;
  server: http.Server;
  close(): Promise<void>;
}

/**
 * A second API instance on the harness's database: other settings (`config`), another Temporal
 * connection (`temporal`, or `unreachable` for a port nothing listens on), or only the given routes.
 */
export async function startExtraApp(
  h: Pick<Harness, 'config' | 'db' | 'connection' | 'client'>,
  opts: {
    config?: Partial<Config>;
    temporal?: Connection | 'unreachable';
    routes?: RouteSpec[];
    /** A client on an in-process worker's connection: starts are eager, as in `npm start`. */
    eager?: Client;
  } = {},
): Promise<ExtraApp> {
  let temporal: AppDeps['temporal'] = { connection: h.connection, client: h.client };
  let own: Connection | undefined;
  if (opts.temporal) {
    const connection =
      opts.temporal === 'unreachable'
        ? Connection.lazy({ address: `127.0.0.1:${await freePort()}`, connectTimeout: '1 second' })
        : opts.temporal;
    if (opts.temporal === 'unreachable') own = connection;
    temporal = { connection, client: new Client({ connection }) };
  }
  if (opts.eager) temporal = { ...temporal, eager: opts.eager };
  const deps = { config: { ...h.config, ...opts.config }, db: h.db, log: pino({ level: 'silent' }), temporal };
  const app = opts.routes ? createApp(deps, opts.routes) : createApp(deps);
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    async close() {
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
      await own?.close().catch(() => undefined);
    },
  };
}
