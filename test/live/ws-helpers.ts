import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { WebSocket } from 'ws';
import { createApp } from '../../api/app';
import { attachLiveSocket, type LiveSocket, type LiveSocketOptions } from '../../api/live/socket';
import type { Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';

export interface Replica {
  url: string;
  ws: string;
  live: LiveSocket;
  deps: object;
}

/** API replicas on the harness's database: each its own app, HTTP server, live socket and LISTEN connection. */
export function replicas(getHarness: () => Harness) {
  const servers: Array<{ server: http.Server; live: LiveSocket }> = [];
  return {
    async start(opts: LiveSocketOptions = {}): Promise<Replica> {
      const h = getHarness();
      const app = createApp({
        config: h.config,
        db: h.db,
        log: pino({ level: 'silent' }),
        temporal: { connection: h.connection, client: h.client },
      });
      const server = http.createServer(app.callback());
      const live = attachLiveSocket(server, app, opts);
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      servers.push({ server, live });
      await pollUntil(
        async () => live.listener.connected,
        (c) => c,
        30_000,
      );
      const port = (server.address() as AddressInfo).port;
      return { url: `http://127.0.0.1:${port}`, ws: `ws://127.0.0.1:${port}/v1/ws`, live, deps: app.context.deps };
    },
    async closeAll(): Promise<void> {
      for (const s of servers.splice(0)) {
        await s.live.close();
        s.server.closeAllConnections();
        await new Promise<void>((r) => s.server.close(() => r()));
      }
    },
  };
}

export interface TestClient {
  ws: WebSocket;
  frames: any[];
  closed: Promise<number>;
}

/** A client that records every frame it receives. */
export async function client(url: string, opts: { autoPong?: boolean } = {}): Promise<TestClient> {
  const ws = new WebSocket(url, { autoPong: opts.autoPong ?? true });
  const frames: any[] = [];
  ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
  const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, frames, closed };
}

/** Waits until a recorded frame matches. */
export const until = (frames: any[], pred: (f: any) => boolean) =>
  pollUntil(
    async () => frames.find(pred),
    (f) => f !== undefined,
    30_000,
  );

/** A socket authenticated with `apiKey` and subscribed to `session` (both answered). */
export async function authed(url: string, apiKey: string, session: string): Promise<TestClient> {
  const c = await client(url);
  c.ws.send(JSON.stringify({ type: 'auth', key: apiKey }));
  await until(c.frames, (f) => f.type === 'auth_ok');
  c.ws.send(JSON.stringify({ type: 'subscribe', session }));
  await until(c.frames, (f) => f.type === 'subscribed');
  return c;
}
