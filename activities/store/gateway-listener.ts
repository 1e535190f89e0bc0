import pg from 'pg';
import type { Logger } from 'pino';

export const GATEWAY_CHANNEL = 'svc_gateway';

export interface GatewayNotice {
  kind: string;
  id: string;
}

export interface GatewayListener {
  /** True while LISTEN is up: only then may caches answer without asking the database. */
  readonly connected: boolean;
  /** Keeps the connection up (or brings it up); call on every use. */
  touch(): void;
  close(): Promise<void>;
}

/**
 * The LISTEN connection behind the gateway caches (a plain `pg.Client` outside the pool, see
 * field notes). Notices ("key:<id>", "feedback:<tenant>", "limits:<tenant>") go to `onNotice`;
 * every (re)connect and every loss calls `onReset`, since notices sent meanwhile are lost and
 * caches must start over. Connects on first use, reconnects with backoff, and drops the
 * connection after `idleCloseMs` without use, so an idle process (or a finished test) holds none.
 */
export function createGatewayListener(opts: {
  url: string;
  log: Logger;
  onNotice: (n: GatewayNotice) => void;
  onReset: () => void;
  idleCloseMs?: number;
}): GatewayListener {
  let client: pg.Client | null = null;
  let connected = false;
  let closed = false;
  let backoff = 100;
  let lastUse = 0;
  let retryAt = 0;
  const idleMs = opts.idleCloseMs ?? 30_000;

  const drop = (c: pg.Client) => {
    if (client !== c) return;
    client = null;
    const was = connected;
    connected = false;
    if (was) opts.onReset();
    c.removeAllListeners('notification');
    c.end().catch(() => undefined);
  };

  const connect = () => {
    if (closed || client || Date.now() < retryAt) return;
    const c = new pg.Client({ connectionString: opts.url, connectionTimeoutMillis: 5000 });
    client = c;
    const fail = (err: Error) => {
      opts.log.warn({ err: err.message }, 'gateway listener connection lost: caches bypassed until it is back');
      retryAt = Date.now() + backoff;
      backoff = Math.min(backoff * 2, 5000);
      drop(c);
    };
    c.on('error', fail);
    c.on('end', () => drop(c));
    c.on('notification', (msg) => {
      if (msg.channel !== GATEWAY_CHANNEL || !msg.payload) return;
      const i = msg.payload.indexOf(':');
      if (i > 0) opts.onNotice({ kind: msg.payload.slice(0, i), id: msg.payload.slice(i + 1) });
    });
    c.connect()
      .then(() => c.query(`LISTEN ${GATEWAY_CHANNEL}`))
      .then(() => {
        if (client !== c) return;
        backoff = 100;
        connected = true;
        opts.onReset(); // whatever was cached before this connection may have missed notices
      })
      .catch(fail);
  };

  const idleTimer = setInterval(
    () => {
      if (client && Date.now() - lastUse > idleMs) drop(client);
    },
    Math.min(idleMs, 5000),
  );
  idleTimer.unref();

  return {
    get connected() {
      return connected;
    },
    touch() {
      lastUse = Date.now();
      if (!client) connect();
    },
    async close() {
      closed = true;
      clearInterval(idleTimer);
      if (client) drop(client);
    },
  };
}
