import { PassThrough } from 'node:stream';
import type { CommonQueryMethods } from 'slonik';
import { timestamptzText } from '../activities/store/db';
import { createEventListener, type EventListener } from '../activities/store/event-listener';
import { readEventsAfter, type EventRow } from '../activities/store/events';
import { AppError } from '../schema/errors';
import type { AppContext } from './context';
import type { AppDeps } from './deps';

export interface SseMessage {
  id?: string | number;
  /** SSE `event:` name; omit for plain `message` events (what `EventSource.onmessage` sees). */
  event?: string;
  data: unknown;
}

export interface SseWriter {
  send(msg: SseMessage): void;
  comment(text: string): void;
  /** Runs `fn` and writes what it sent as one write (events that arrived together go out in one chunk). */
  batch<T>(fn: () => T): T;
  close(): void;
  readonly closed: boolean;
  /** Bytes written and not yet taken by the client: the body's buffers and, when reachable, the socket's. */
  readonly buffered: number;
  /**
   * Resolves once `buffered` is at most `cap` (at once when it is), or when the stream closes; waits on
   * the body's and the socket's 'drain' and leaves no listener behind.
   */
  drained(cap?: number): Promise<void>;
  /** Resolves when the client goes away or `close()` is called. */
  readonly done: Promise<void>;
}

/**
 * Unsent bytes past which a persisted-event stream waits for its reader before reading more (as the
 * WebSocket's 1 MB slow-consumer cap; a stream can resume by id, so waiting loses nothing).
 */
export const SSE_MAX_BUFFERED = 1024 * 1024;

/** The reconnect delay a draining server tells its SSE clients. */
export const DRAIN_RETRY_MS = 500;

/** True when the client asked for a stream (`Accept: text/event-stream`). */
export function wantsEventStream(ctx: AppContext): boolean {
  return (ctx.get('Accept') ?? '').toLowerCase().includes('text/event-stream');
}

/**
 * The resume point a reconnecting client sent: the `Last-Event-ID` header (what EventSource sends;
 * declared on the route with `ResumeHeaders` and parsed there) or the `last_event_id` query parameter.
 * Undefined when absent.
 * @throws AppError invalid_request when the query value is not a non-negative integer
 */
export function lastEventIdOf(ctx: AppContext, header: number | undefined): number | undefined {
  if (header !== undefined) return header;
  const raw = typeof ctx.query.last_event_id === 'string' ? ctx.query.last_event_id : '';
  if (!raw) return undefined;
  if (!/^\d{1,15}$/.test(raw.trim())) {
    throw new AppError('invalid_request', 'Last-Event-ID must be an event id (a non-negative integer).', {
      details: [{ path: 'query.last_event_id', message: 'not an event id' }],
    });
  }
  return Number(raw.trim());
}

/**
 * Turns the response into a server-sent-event stream: headers that defeat proxy buffering,
 * no socket timeout, a comment heartbeat so idle connections stay open (and dead ones are
 * found), and cleanup when the client disconnects.
 */
export function openSse(ctx: AppContext, opts: { heartbeatMs?: number; retryMs?: number } = {}): SseWriter {
  const body = new PassThrough();
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.req.socket.setKeepAlive(true);
  ctx.status = 200;
  ctx.type = 'text/event-stream';
  ctx.set('Cache-Control', 'no-cache, no-transform');
  ctx.set('Connection', 'keep-alive');
  ctx.set('X-Accel-Buffering', 'no');
  ctx.body = body;

  let closed = false;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  const heartbeat = setInterval(() => write(': keep-alive\n\n'), opts.heartbeatMs ?? 15_000);
  heartbeat.unref();

  /** Text sent inside `batch`, written when it ends (or at close). */
  let held: string | undefined;
  function write(text: string) {
    if (closed || body.destroyed) return;
    if (held !== undefined) held += text;
    else body.write(text);
  }
  function flush() {
    if (!held) return;
    const text = held;
    held = '';
    if (!body.destroyed) body.write(text);
  }
  const socket = ctx.req.socket;
  function buffered(): number {
    return body.writableLength + body.readableLength + (socket.writableLength ?? 0);
  }
  /** Ends of the `drained` waits under way (called at close). */
  const waiters = new Set<() => void>();
  function drained(cap = SSE_MAX_BUFFERED): Promise<void> {
    if (closed || buffered() <= cap) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const check = () => {
        if (closed || buffered() <= cap) end();
      };
      const end = () => {
        body.off('drain', check);
        socket.off('drain', check);
        waiters.delete(end);
        resolve();
      };
      // Whichever buffer holds the bytes passed its high-water mark, so it emits 'drain' when it empties.
      body.on('drain', check);
      socket.on('drain', check);
      waiters.add(end);
    });
  }
  function close() {
    if (closed) return;
    flush();
    closed = true;
    clearInterval(heartbeat);
    body.end();
    for (const end of [...waiters]) end();
    resolveDone();
  }
  ctx.req.on('close', close);
  body.on('error', close);
  if (opts.retryMs !== undefined) write(`retry: ${opts.retryMs}\n\n`);
  // A draining process hands the stream off: the client reconnects (to another replica) with Last-Event-ID.
  const offDrain = ctx.deps.lifecycle?.onDrain(() => {
    write(`retry: ${DRAIN_RETRY_MS}\n: server shutting down; reconnect with Last-Event-ID\n\n`);
    close();
  });
  void done.then(() => offDrain?.());

  return {
    send(msg) {
      let text = '';
      if (msg.id !== undefined) text += `id: ${msg.id}\n`;
      if (msg.event) text += `event: ${msg.event.replace(/[\r\n]/g, ' ')}\n`;
      const data = typeof msg.data === 'string' ? msg.data : JSON.stringify(msg.data);
      for (const line of data.split(/\r?\n/)) text += `data: ${line}\n`;
      write(text + '\n');
    },
    comment(text) {
      write(`: ${text.replace(/[\r\n]/g, ' ')}\n\n`);
    },
    batch(fn) {
      if (held !== undefined) return fn();
      held = '';
      try {
        return fn();
      } finally {
        flush();
        held = undefined;
      }
    },
    close,
    get closed() {
      return closed;
    },
    get buffered() {
      return buffered();
    },
    drained,
    done,
  };
}

const listeners = new WeakMap<AppDeps, EventListener>();

/** The process's LISTEN connection for this app instance (created on first use). */
export function eventListenerOf(deps: AppDeps): EventListener {
  if (deps.listener) return deps.listener;
  let l = listeners.get(deps);
  if (!l) {
    l = createEventListener({ url: deps.config.databaseUrl, log: deps.log });
    listeners.set(deps, l);
  }
  return l;
}

/**
 * A subscription to one persisted event stream on the process's LISTEN connection: the events its
 * notices carry, in arrival order (= id order on one connection), and whether the reader must read
 * back from the database (`dirty`: a notice without its events, a (re)connect of the listener).
 */
export interface StreamFeed {
  /** Events carried by notices, in arrival order; those at or below the reader's last id were read back already. */
  carried: EventRow[];
  /** Read back from the reader's last id before anything else. */
  dirty: boolean;
  /** Called on every notice (set by the reader that waits). */
  wake?: () => void;
  /** Set while the reader waits for a slow client: notices only mark the feed dirty (nothing piles up in memory). */
  held?: boolean;
  unsubscribe(): void;
}

/**
 * Subscribes to `stream` of `tenantId` now. Opened before a run is started (POST /v1/tasks/{id}/execute),
 * every event of the run comes through its notices, and the reader needs no first read from the
 * database (`dirty` is false while the listener was up from the start and every notice carried its
 * events); otherwise the reader reads back first.
 */
export function subscribeStream(ctx: AppContext, o: { tenantId: string; stream: string }): StreamFeed {
  const listener = eventListenerOf(ctx.deps);
  const feed: StreamFeed = { carried: [], dirty: !listener.connected, unsubscribe: () => undefined };
  feed.unsubscribe = listener.subscribe(o.stream, (notice) => {
    if (notice?.t !== undefined && notice.t !== o.tenantId) return; // another tenant's stream of that name
    if (notice?.ev && !feed.held) {
      for (const e of notice.ev)
        feed.carried.push({
          id: e.id,
          stream: o.stream,
          type: e.type,
          data: e.data,
          created_at: timestamptzText(e.created_at),
        });
    } else feed.dirty = true; // read back from the last id (a notice without its events, or a held feed)
    feed.wake?.();
  });
  return feed;
}

/**
 * Streams a persisted event stream as SSE from `afterId` on: each row once, in id order, with
 * its id as the SSE id, until `isFinal(row)` or the client leaves. NOTIFY wakes the reader and
 * usually carries the new events (see `EventNotice`): on one LISTEN connection a stream's notices
 * come in id order with none missing, so those events are sent as they are; a notice without
 * them, a (re)connect of the listener and the slow poll (which covers a listener that is down)
 * make the reader read back from its last id instead. The reader reads back first, unless it is
 * given a `feed` opened before any event after `afterId` could exist and still clean. A reader
 * that does not read holds at most `SSE_MAX_BUFFERED` plus one page: past it the stream waits for
 * 'drain' before reading (or sending) more, and then reads back from its last id. Returns at
 * once: the stream runs in the background.
 */
export function pipeEventStream(
  ctx: AppContext,
  opts: {
    db: CommonQueryMethods;
    tenantId: string;
    stream: string;
    afterId: number;
    types?: string[];
    toMessage: (row: EventRow) => SseMessage | null;
    isFinal: (row: EventRow) => boolean;
    heartbeatMs?: number;
    pollMs?: number;
    /** A subscription opened before the first event after `afterId` (see `subscribeStream`); the stream owns it now. */
    feed?: StreamFeed;
  },
): SseWriter {
  const sse = openSse(ctx, { heartbeatMs: opts.heartbeatMs });
  const listener = eventListenerOf(ctx.deps);
  let last = opts.afterId;
  const feed = opts.feed ?? subscribeStream(ctx, opts);
  if (!opts.feed) feed.dirty = true;
  /** Sends the rows after `last` (ascending ids) in one write; true when the final one was sent. */
  const deliver = (rows: readonly EventRow[], filter: boolean): boolean =>
    sse.batch(() => {
      for (const row of rows) {
        if (row.id <= last) continue;
        last = row.id;
        if (filter && opts.types && !opts.types.includes(row.type)) continue;
        const msg = opts.toMessage(row);
        if (msg) sse.send({ id: row.id, ...msg });
        if (opts.isFinal(row)) {
          sse.close();
          return true;
        }
      }
      return false;
    });
  const loop = async () => {
    while (!sse.closed) {
      if (sse.buffered > SSE_MAX_BUFFERED) {
        // A slow reader: read nothing more until it has taken its bytes. Events that arrive meanwhile
        // are read back from the database by id afterwards (as a resume does), not held here.
        feed.held = true;
        feed.carried = [];
        feed.dirty = true;
        await sse.drained(SSE_MAX_BUFFERED);
        feed.held = false;
        continue;
      }
      if (feed.dirty) {
        feed.dirty = false;
        const rows = await readEventsAfter(opts.db, {
          tenantId: opts.tenantId,
          stream: opts.stream,
          afterId: last,
          types: opts.types,
          limit: 500,
        });
        if (deliver(rows, false)) return;
        if (rows.length === 500) feed.dirty = true;
        continue;
      }
      if (feed.carried.length) {
        const rows = feed.carried;
        feed.carried = [];
        if (deliver(rows, true)) return;
        continue;
      }
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((r) => (feed.wake = r)),
        new Promise<void>(
          (r) =>
            (timer = setTimeout(() => ((feed.dirty = true), r()), listener.connected ? (opts.pollMs ?? 5000) : 500)),
        ),
        sse.done,
      ]);
      clearTimeout(timer);
      feed.wake = undefined;
    }
  };
  loop()
    .catch((err: Error) => {
      ctx.deps.log.warn({ err: err.message, stream: opts.stream }, 'event stream ended by an error');
      sse.comment('error: stream interrupted; reconnect with Last-Event-ID');
    })
    .finally(() => {
      feed.unsubscribe();
      sse.close();
    });
  return sse;
}

/**
 * A job's event stream as SSE, the common way: each event under its own type and id, closed after
 * `done`; resumes after `afterId` (Last-Event-ID). Research, agent, workspace and plan runs use it.
 */
export function pipeJobEvents(ctx: AppContext, o: { tenantId: string; stream: string; afterId: number }): SseWriter {
  return pipeEventStream(ctx, {
    db: ctx.deps.db,
    ...o,
    toMessage: (row) => ({ event: row.type, data: row.data }),
    isFinal: (row) => row.type === 'done',
  });
}
