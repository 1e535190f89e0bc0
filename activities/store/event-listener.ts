import pg from 'pg';
import type { Logger } from 'pino';
import { EVENTS_CHANNEL, type EventNotice } from './events';

export interface ChannelHandler {
  onPayload: (payload: string) => void;
  /** Runs after every (re)connect: notifications sent while down are lost, so re-read what matters. */
  onReconnect?: () => void;
}

export interface EventListener {
  /**
   * Calls `wake` whenever the stream may have new rows: on a NOTIFY for it (with the notice), and
   * with no notice after every (re)connect, since notifications sent while disconnected are lost
   * (a notice that arrives before the connection counts as up is passed as no notice too).
   * Returns the unsubscriber.
   */
  subscribe(stream: string, wake: (notice?: EventNotice) => void): () => void;
  /** Raw payloads of another channel (e.g. the live plane's `svc_live`). Returns the unsubscriber. */
  listen(channel: string, handler: ChannelHandler): () => void;
  /** True while the LISTEN connection is up. */
  readonly connected: boolean;
  close(): Promise<void>;
}

const CHANNEL_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The one LISTEN/NOTIFY client of a process: a dedicated `pg.Client` (outside the pool, which
 * would hand the connection to other queries) for event streams and any other channel. Connects
 * on the first subscriber, reconnects with backoff and re-LISTENs every channel after errors, and
 * disconnects shortly after the last subscriber leaves, so idle processes and finished tests hold
 * no connection.
 */
export function createEventListener(opts: { url: string; log: Logger; idleCloseMs?: number }): EventListener {
  const subs = new Map<string, Set<(notice?: EventNotice) => void>>();
  const channels = new Map<string, Set<ChannelHandler>>();
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  let connected = false;
  let closed = false;
  let backoff = 100;
  let retryTimer: NodeJS.Timeout | undefined;
  let idleTimer: NodeJS.Timeout | undefined;

  const count = () => [...subs.values(), ...channels.values()].reduce((n, s) => n + s.size, 0);
  const afterConnect = () => {
    subs.forEach((set) => set.forEach((w) => w()));
    channels.forEach((set) => set.forEach((h) => h.onReconnect?.()));
  };

  const scheduleReconnect = () => {
    if (closed || retryTimer || count() === 0) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      if (count() > 0) void connect();
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

  const onNotification = (msg: pg.Notification) => {
    if (!msg.payload) return;
    if (msg.channel !== EVENTS_CHANNEL) {
      channels.get(msg.channel)?.forEach((h) => h.onPayload(msg.payload as string));
      return;
    }
    let notice: EventNotice;
    try {
      notice = JSON.parse(msg.payload) as EventNotice;
    } catch {
      return;
    }
    // Until the (re)connect's wake-up has gone out, a notice may follow a gap: pass it as a plain wake.
    const given = connected ? notice : undefined;
    subs.get(notice.stream)?.forEach((w) => w(given));
  };

  const connect = (): Promise<void> => {
    if (closed || client || connecting) return connecting ?? Promise.resolve();
    const c = new pg.Client({ connectionString: opts.url, connectionTimeoutMillis: 5000 });
    c.on('error', (err) => {
      opts.log.warn({ err: err.message }, 'LISTEN connection lost; reconnecting');
      drop(c);
      scheduleReconnect();
    });
    c.on('end', () => {
      if (client === c) {
        drop(c);
        scheduleReconnect();
      }
    });
    c.on('notification', onNotification);
    client = c;
    connecting = (async () => {
      try {
        await c.connect();
        // Every channel in one round trip; a channel added meanwhile is LISTENed by `listen` itself.
        const names = [EVENTS_CHANNEL, ...channels.keys()];
        await c.query(names.map((ch) => `LISTEN ${ch};`).join(' '));
        for (const ch of channels.keys()) if (!names.includes(ch)) await c.query(`LISTEN ${ch}`);
        if (client !== c) return;
        connected = true;
        backoff = 100;
        afterConnect();
      } catch (err) {
        opts.log.warn(
          { err: (err as Error).message },
          'LISTEN connection cannot connect; readers fall back to polling',
        );
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
  const keepUp = () => {
    clearTimeout(idleTimer);
    idleTimer = undefined;
    void connect();
  };

  return {
    subscribe(stream, wake) {
      if (closed) return () => undefined;
      let set = subs.get(stream);
      if (!set) subs.set(stream, (set = new Set()));
      set.add(wake);
      keepUp();
      return () => {
        const s = subs.get(stream);
        s?.delete(wake);
        if (s && s.size === 0) subs.delete(stream);
        maybeIdle();
      };
    },
    listen(channel, handler) {
      if (!CHANNEL_NAME.test(channel) || channel === EVENTS_CHANNEL) throw new Error(`bad channel name: ${channel}`);
      if (closed) return () => undefined;
      let set = channels.get(channel);
      const added = !set;
      if (!set) channels.set(channel, (set = new Set()));
      set.add(handler);
      // Already up: LISTEN the new channel now (a connect in progress LISTENs it with the others).
      if (added && connected && client) {
        const c = client;
        c.query(`LISTEN ${channel}`)
          .then(() => handler.onReconnect?.())
          .catch(() => {
            drop(c);
            scheduleReconnect();
          });
      } else if (connected) handler.onReconnect?.();
      keepUp();
      return () => {
        const s = channels.get(channel);
        s?.delete(handler);
        if (s && s.size === 0) {
          channels.delete(channel);
          if (connected && client) client.query(`UNLISTEN ${channel}`).catch(() => undefined);
        }
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
      channels.clear();
      await connecting?.catch(() => undefined);
      if (client) drop(client);
    },
  };
}
