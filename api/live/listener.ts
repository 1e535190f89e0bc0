import pg from 'pg';
import type { Logger } from 'pino';

export const LIVE_CHANNEL = 'svc_live';

export interface LiveListener {
  readonly connected: boolean;
  close(): Promise<void>;
}

/**
 * LISTEN on the live channel over one dedicated connection (outside the pool), reconnecting with
 * backoff. `onReconnect` runs after every (re)connect: notifications sent while down are lost, so
 * the hub re-reads the latest sample then.
 */
export function listenLive(opts: {
  url: string;
  log: Logger;
  onPayload: (payload: string) => void;
  onReconnect?: () => void;
}): LiveListener {
  let client: pg.Client | null = null;
  let connected = false;
  let closed = false;
  let backoff = 100;
  let timer: NodeJS.Timeout | undefined;

  const retry = () => {
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, backoff);
    timer.unref();
    backoff = Math.min(backoff * 2, 5000);
  };
  const drop = (c: pg.Client) => {
    if (client !== c) return;
    client = null;
    connected = false;
    c.removeAllListeners('notification');
    c.end().catch(() => undefined);
    retry();
  };
  const connect = async () => {
    if (closed || client) return;
    const c = new pg.Client({ connectionString: opts.url, connectionTimeoutMillis: 5000 });
    client = c;
    c.on('error', (err) => {
      opts.log.warn({ err: err.message }, 'live listener connection lost; reconnecting');
      drop(c);
    });
    c.on('end', () => drop(c));
    c.on('notification', (msg) => {
      if (msg.channel === LIVE_CHANNEL && msg.payload) opts.onPayload(msg.payload);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${LIVE_CHANNEL}`);
      if (closed) return void c.end().catch(() => undefined);
      connected = true;
      backoff = 100;
      opts.onReconnect?.();
    } catch (err) {
      opts.log.warn({ err: (err as Error).message }, 'live listener could not connect; retrying');
      drop(c);
    }
  };
  void connect();
  return {
    get connected() {
      return connected;
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      const c = client;
      client = null;
      connected = false;
      await c?.end().catch(() => undefined);
    },
  };
}
