import pg from 'pg';
import type { Logger } from 'pino';
import { EVENTS_CHANNEL, type EventNotice } from './events';

export interface EventListener {
  /**
   * Calls `wake` whenever the stream may have new rows: on a NOTIFY for it, and after every
   * (re)connect, since notifications sent while disconnected are lost. Returns the unsubscriber.
   */
  subscribe(stream: string, wake: () => void): () => void;
  /** True while the LISTEN connection is up. */
  readonly connected: boolean;
  close(): Promise<void>;
}

/**
 * LISTEN/NOTIFY fan-out over one dedicated `pg.Client` per process (outside the pool, which
 * would hand the connection to other queries). Connects on the first subscriber, reconnects
 * with backoff and re-LISTENs after errors, and disconnects shortly after the last subscriber
 * leaves, so idle processes and finished tests hold no connection.
 */
export function createEventListener(opts: { url: string; log: Logger; idleCloseMs?: number }): EventListener {
  const subs = new Map<string, Set<() => void>>();
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  let connected = false;
  let closed = false;
  let backoff = 100;
  let retryTimer: NodeJS.Timeout | undefined;
  let idleTimer: NodeJS.Timeout | undefined;

  const count = () => [...subs.values()].reduce((n, s) => n + s.size, 0);
  const wakeAll = () => subs.forEach((set) => set.forEach((w) => w()));

  const scheduleReconnect = () => {
    if (closed || retryTimer || count() === 0) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void connect();
    }, backoff);
    retryTimer.unref();
    backoff = Math.min(backoff * 2, 5000);
  };

  const drop = (c: pg.Client) => {
    if (client !== c) return;
    client = null;
    connected = false;
    c.removeAllListeners('notification');
    c.end().catch(() => undefined);
  };

  const connect = (): Promise<void> => {
    if (closed || client || connecting) return connecting ?? Promise.resolve();
    const c = new pg.Client({ connectionString: opts.url, connectionTimeoutMillis: 5000 });
    c.on('error', (err) => {
      opts.log.warn({ err: err.message }, 'event listener connection lost; reconnecting');
      drop(c);
      scheduleReconnect();
    });
    c.on('end', () => {
      if (client === c) {
        drop(c);
        scheduleReconnect();
      }
    });
    c.on('notification', (msg) => {
      if (msg.channel !== EVENTS_CHANNEL || !msg.payload) return;
      let notice: EventNotice;
      try {
        notice = JSON.parse(msg.payload) as EventNotice;
      } catch {
        return;
      }
      subs.get(notice.stream)?.forEach((w) => w());
    });
    client = c;
    connecting = (async () => {
      try {
        await c.connect();
        await c.query(`LISTEN ${EVENTS_CHANNEL}`);
        if (client !== c) return;
        connected = true;
        backoff = 100;
        wakeAll();
      } catch (err) {
        opts.log.warn({ err: (err as Error).message }, 'event listener cannot connect; readers fall back to polling');
        drop(c);
        scheduleReconnect();
      } finally {
        connecting = null;
      }
    })();
    return connecting;
  };

  const maybeIdle = () => {
    if (count() > 0 || idleTimer) return;
    idleTimer = setTimeout(() => {
      idleTimer = undefined;
      if (count() === 0 && client) drop(client);
    }, opts.idleCloseMs ?? 1000);
    idleTimer.unref();
  };

  return {
    subscribe(stream, wake) {
      if (closed) return () => undefined;
      let set = subs.get(stream);
      if (!set) subs.set(stream, (set = new Set()));
      set.add(wake);
      clearTimeout(idleTimer);
      idleTimer = undefined;
      void connect();
      return () => {
        const s = subs.get(stream);
        s?.delete(wake);
        if (s && s.size === 0) subs.delete(stream);
        maybeIdle();
      };
    },
    get connected() {
      return connected;
    },
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      clearTimeout(idleTimer);
      subs.clear();
      await connecting?.catch(() => undefined);
      if (client) drop(client);
    },
  };
}
