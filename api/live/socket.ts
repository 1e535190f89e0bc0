import type http from 'node:http';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { Counter, Gauge, Histogram } from 'prom-client';
import type Koa from 'koa';
import { WebSocket, WebSocketServer } from 'ws';
import { GATEWAY_CHANNEL } from '../../activities/store/gateway-listener';
import { authenticateKey, keysHoldingScope } from '../../activities/store/keys';
import { LIVE_CHANNEL, latestSample, sampleById } from '../../activities/store/live';
import { ClientMessage, ServerFrame } from '../../schema/live-frames';
import type { AppExtras, AppState } from '../context';
import { connectionCapRefusal } from '../http-server';
import { sampleFrames } from './frames';
import { eventListenerOf } from '../sse';
import { createAnnouncer, liveInterestOf } from './interest';

export interface LiveSocketOptions {
  /** Ping interval; a peer that misses one pong is closed at the next tick (within 2 intervals). */
  heartbeatMs?: number;
  maxConnections?: number;
  /** A client whose unsent data exceeds this is closed (slow consumer). */
  maxBufferedBytes?: number;
  /** How often this replica re-announces its clients' subscriptions to every replica (they expire after 3). */
  announceMs?: number;
}

interface LiveClient {
  ws: WebSocket;
  /** The connection's TCP socket: frames built once per broadcast are written straight to it. */
  raw?: Socket;
  alive: boolean;
  tenantId?: string;
  /** The key that authenticated the connection: re-checked on its gateway notice and on every heartbeat tick. */
  keyId?: string;
  sessions: Set<string>;
  /** Messages are handled one at a time, in order: each waits for the one before it. */
  chain: Promise<void>;
  /** Token bucket of the message rate: MSG_BURST at most, MSG_PER_SECOND added per second. */
  allowance: number;
  allowanceAt: number;
  failedAuths: number;
}

/**
 * The bytes of unmasked, final text frames (RFC 6455 §5.2, what ws writes for a server's `send`) around each
 * payload, in one buffer: built once per broadcast and written to every client with one socket write, instead of
 * ws framing each send again (options object, header buffer, cork/uncork around two writes). Measured: about
 * 15 % less CPU per send (docs/decisions.md, WebSocket fan-out).
 */
export function textFrames(payloads: Buffer[]): Buffer {
  const head = (n: number) => (n < 126 ? 2 : n < 65_536 ? 4 : 10);
  const out = Buffer.allocUnsafe(payloads.reduce((n, p) => n + head(p.length) + p.length, 0));
  let at = 0;
  for (const p of payloads) {
    out[at] = 0x81; // FIN + text
    if (p.length < 126) out[at + 1] = p.length;
    else if (p.length < 65_536) {
      out[at + 1] = 126;
      out.writeUInt16BE(p.length, at + 2);
    } else {
      out[at + 1] = 127;
      out.writeBigUInt64BE(BigInt(p.length), at + 2);
    }
    at += head(p.length);
    at += p.copy(out, at);
  }
  return out;
}

/**
 * The client's TCP socket when writing frames to it directly is safe: ws's sender writes every frame at once
 * (nothing queued between two writes of ours) as long as no extension (permessage-deflate) is in use.
 */
function rawSocketOf(ws: WebSocket): Socket | undefined {
  const raw = (ws as unknown as { _socket?: unknown })._socket;
  return raw instanceof Socket && ws.extensions === '' ? raw : undefined;
}

const MAX_SESSIONS = 20;
/**
 * Per connection, messages of any kind: a burst of 40 (an auth and 20 subscribes fit twice), then 10 a second on
 * average; past that the socket is closed 1008. With messages handled one at a time this also bounds what one
 * connection can have queued.
 */
const MSG_BURST = 40;
const MSG_PER_SECOND = 10;
/** Failed `auth` messages one connection may send; the next failure closes it 1008 (key guessing). */
const MAX_FAILED_AUTHS = 5;

interface Encoded {
  payloads: Buffer[];
  wire: Buffer;
}

const attached = new WeakMap<object, LiveSocket>();

/** The live socket attached in this process for these deps (GET /v1/daemons reports its LISTEN connection). */
export function liveSocketOf(deps: object): LiveSocket | undefined {
  return attached.get(deps);
}

export interface LiveSocket {
  readonly clients: number;
  /** The process's LISTEN connection (shared with event streams). */
  readonly listener: { readonly connected: boolean };
  /** Sends frames to every client (each validated first; an invalid one is logged and left out), in one write each. */
  broadcast(...frames: ServerFrame[]): void;
  close(): Promise<void>;
}

/**
 * GET /v1/ws on the API's HTTP server: public frames fanned out from PostgreSQL NOTIFY (so every
 * replica sends the same frames), token/done frames only to the authenticated owner, ping/pong
 * heartbeat, a send-buffer cap and a connection cap.
 */
export function attachLiveSocket(
  server: http.Server,
  app: Koa<AppState, AppExtras>,
  opts: LiveSocketOptions = {},
): LiveSocket {
  const deps = app.context.deps;
  const heartbeatMs = opts.heartbeatMs ?? 30_000;
  const maxConnections = opts.maxConnections ?? 1000;
  const maxBuffered = opts.maxBufferedBytes ?? 1_000_000;
  const registry = app.context.metrics.registry;
  const gauge = new Gauge({
    name: 'svc_ws_connections',
    help: 'Open WebSocket connections on /v1/ws.',
    registers: [registry],
  });
  const closedCounter = new Counter({
    name: 'svc_ws_closed_total',
    help: 'WebSocket clients closed by the server, by reason.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const fanout = new Histogram({
    name: 'svc_ws_fanout_seconds',
    help: 'Time to hand one broadcast (the frames of one notice) to every client socket of this process.',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
    registers: [registry],
  });
  // No per-message compression: frames are small, and deflate per client would cost a compression per send.
  const wss = new WebSocketServer({ noServer: true, maxPayload: 4096, perMessageDeflate: false });
  const clients = new Set<LiveClient>();

  /** Validated frames, serialised once: each payload, and the wire bytes of all of them (undefined: none valid). */
  const encode = (frames: ServerFrame[]): Encoded | undefined => {
    const payloads = frames.filter(valid).map((f) => Buffer.from(JSON.stringify(f)));
    return payloads.length ? { payloads, wire: textFrames(payloads) } : undefined;
  };
  /** One client gets encoded frames: one write of the wire bytes (ws frames them itself where no raw socket). */
  const write = (c: LiveClient, e: Encoded) => {
    if (c.ws.readyState !== WebSocket.OPEN) return;
    if ((c.raw ? c.raw.writableLength : c.ws.bufferedAmount) > maxBuffered) {
      closedCounter.inc({ reason: 'slow_consumer' });
      c.ws.terminate();
      return;
    }
    if (c.raw) c.raw.write(e.wire);
    else for (const p of e.payloads) c.ws.send(p, { binary: false, compress: false });
  };
  const send = (c: LiveClient, ...frames: ServerFrame[]) => {
    const e = encode(frames);
    if (e) write(c, e);
  };
  const valid = (frame: ServerFrame): boolean => {
    const ok = ServerFrame.safeParse(frame).success;
    if (!ok) deps.log.error({ type: frame.type }, 'live frame does not match its schema: not sent');
    return ok;
  };
  /** Frames to every client: the frames of one notice go out in one write per client. */
  const broadcast = (...frames: ServerFrame[]) => {
    const started = performance.now();
    const e = encode(frames);
    if (!e) return;
    for (const c of clients) write(c, e);
    fanout.observe((performance.now() - started) / 1000);
  };

  const announcer = createAnnouncer({
    db: deps.db,
    log: deps.log,
    interest: liveInterestOf(deps, true)!,
    announceMs: opts.announceMs ?? 20_000,
    pairs: function* () {
      for (const c of clients) if (c.tenantId) for (const s of c.sessions) yield [c.tenantId, s] as const;
    },
  });

  const onPayload = async (payload: string) => {
    let n: { kind?: string; id?: number | string; tenant?: string; content?: string };
    try {
      n = JSON.parse(payload);
    } catch {
      return;
    }
    if (n.kind === 'sample' && typeof n.id === 'number') {
      const s = await sampleById(deps.db, n.id);
      if (s) broadcast(...(await sampleFrames(deps.db, s)));
    } else if (n.kind === 'dispatch' && typeof n.id === 'string') {
      broadcast({ type: 'agent_dispatch', action: n.id });
    } else if ((n.kind === 'token' || n.kind === 'done') && typeof n.id === 'string' && n.tenant) {
      const frame: ServerFrame =
        n.kind === 'token'
          ? { type: 'token', session: n.id, content: n.content ?? '' }
          : { type: 'done', session: n.id };
      const e = encode([frame]);
      if (e) for (const c of clients) if (c.tenantId === n.tenant && c.sessions.has(n.id)) write(c, e);
    } else announcer.onNotice(n);
  };
  const unlisten = eventListenerOf(deps).listen(LIVE_CHANNEL, {
    onPayload: (p) =>
      void onPayload(p).catch((err: Error) => deps.log.warn({ err: err.message }, 'live frame fan-out failed')),
    onReconnect: () => announcer.resync(),
  });
  const listener = eventListenerOf(deps);

  /**
   * Closes the connections whose key is revoked or lost runtime:chat. Their tenant and sessions are cleared first,
   * so no token frame reaches them while the close handshake runs. Close code 1008 (policy violation): the file
   * uses standard codes only (1001 on shutdown), and the `error` frame before it says why.
   */
  const recheckKeys = async (only?: string) => {
    const ids = new Set<string>();
    for (const c of clients) if (c.keyId && (only === undefined || c.keyId === only)) ids.add(c.keyId);
    if (ids.size === 0) return;
    const still = await keysHoldingScope(deps.db, [...ids], 'runtime:chat');
    for (const c of clients) {
      if (!c.keyId || !ids.has(c.keyId) || still.has(c.keyId)) continue;
      c.tenantId = undefined;
      c.keyId = undefined;
      c.sessions.clear();
      closedCounter.inc({ reason: 'key_revoked' });
      send(c, { type: 'error', message: 'The key was revoked or no longer has runtime:chat.' });
      c.ws.close(1008, 'key revoked');
    }
  };
  const recheck = (only?: string) =>
    void recheckKeys(only).catch((err: Error) => deps.log.warn({ err: err.message }, 'live key re-check failed'));
  // The gateway's key notices ("key:<id>", sent by trigger on every revocation or scope change, whatever made it)
  // on the shared LISTEN connection; after a reconnect, notices may have been missed: every key is checked.
  const unlistenKeys = listener.listen(GATEWAY_CHANNEL, {
    onPayload: (p) => {
      if (p.startsWith('key:')) recheck(p.slice(4));
    },
    onReconnect: () => recheck(),
  });

  const onMessage = async (c: LiveClient, data: string) => {
    let raw: unknown;
    try {
      raw = JSON.parse(data);
    } catch {
      return send(c, {
        type: 'error',
        message: 'Send JSON messages: {"type":"auth","key":...} or {"type":"subscribe","session":...}.',
      });
    }
    const m = ClientMessage.safeParse(raw);
    if (!m.success)
      return send(c, {
        type: 'error',
        message: `Invalid message: ${m.error.issues.map((i) => `${i.path.join('.') || 'message'}: ${i.message}`).join('; ')}`,
      });
    if (m.data.type === 'auth') {
      const p = await authenticateKey(deps.db, m.data.key);
      if (!p || p.kind === 'bootstrap' || !p.scopes.includes('runtime:chat')) {
        send(c, { type: 'error', message: 'Invalid key, or it lacks runtime:chat.' });
        if (++c.failedAuths >= MAX_FAILED_AUTHS) {
          closedCounter.inc({ reason: 'failed_auth' });
          c.ws.close(1008, 'too many failed auth messages');
        }
        return;
      }
      c.tenantId = p.tenantId;
      c.keyId = p.keyId;
      c.sessions.clear();
      return send(c, { type: 'auth_ok' });
    }
    if (!c.tenantId) return send(c, { type: 'error', message: 'Authenticate first: {"type":"auth","key":"svc...."}.' });
    if (c.sessions.size >= MAX_SESSIONS && !c.sessions.has(m.data.session))
      return send(c, { type: 'error', message: `At most ${MAX_SESSIONS} subscriptions per connection.` });
    // Already subscribed: every replica was told (and is told again every announce interval), no NOTIFY.
    if (c.sessions.has(m.data.session)) return send(c, { type: 'subscribed', message: m.data.session });
    c.sessions.add(m.data.session);
    // Answered once the notice to every replica is committed (they apply it as it arrives).
    await announcer.subscribed(c.tenantId, m.data.session);
    return send(c, { type: 'subscribed', message: m.data.session });
  };

  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/v1/ws') {
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    const refusal = connectionCapRefusal(socket, deps.config.http.maxConnectionsPerAddress);
    if (refusal) {
      socket.end(refusal);
      return;
    }
    if (clients.size >= maxConnections) {
      closedCounter.inc({ reason: 'connection_cap' });
      socket.end(
        'HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nContent-Length: 0\r\nConnection: close\r\n\r\n',
      );
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const c: LiveClient = {
        ws,
        raw: rawSocketOf(ws),
        alive: true,
        sessions: new Set(),
        chain: Promise.resolve(),
        allowance: MSG_BURST,
        allowanceAt: Date.now(),
        failedAuths: 0,
      };
      clients.add(c);
      gauge.set(clients.size);
      ws.on('pong', () => (c.alive = true));
      ws.on('message', (data, isBinary) => {
        if (ws.readyState !== WebSocket.OPEN) return; // closing: what is still arriving is dropped
        const now = Date.now();
        c.allowance = Math.min(MSG_BURST, c.allowance + ((now - c.allowanceAt) / 1000) * MSG_PER_SECOND);
        c.allowanceAt = now;
        if (c.allowance < 1) {
          closedCounter.inc({ reason: 'flooding' });
          send(c, { type: 'error', message: `Too many messages: at most ${MSG_PER_SECOND} a second.` });
          ws.close(1008, 'too many messages');
          return;
        }
        c.allowance -= 1;
        if (isBinary) return send(c, { type: 'error', message: 'Send text frames.' });
        const text = data.toString();
        c.chain = c.chain
          .then(() => (ws.readyState === WebSocket.OPEN ? onMessage(c, text) : undefined))
          .catch((err: Error) => deps.log.warn({ err: err.message }, 'live client message failed'));
      });
      ws.on('close', () => {
        clients.delete(c);
        gauge.set(clients.size);
      });
      ws.on('error', () => ws.terminate());
      // A new client gets the current state at once instead of waiting up to a minute.
      void latestSample(deps.db)
        .then(async (s) => (s ? sampleFrames(deps.db, s) : []))
        .then((frames) => send(c, ...frames))
        .catch(() => undefined);
    });
  };
  server.on('upgrade', onUpgrade);

  const heartbeat = setInterval(() => {
    recheck(); // the fallback when a key notice was missed: one read for the keys of every open connection
    for (const c of clients) {
      if (!c.alive) {
        closedCounter.inc({ reason: 'dead_peer' });
        c.ws.terminate();
        continue;
      }
      c.alive = false;
      c.ws.ping();
    }
  }, heartbeatMs);
  heartbeat.unref();

  const socket: LiveSocket = {
    get clients() {
      return clients.size;
    },
    listener,
    broadcast,
    close() {
      closing ??= (async () => {
        clearInterval(heartbeat);
        server.off('upgrade', onUpgrade);
        // Going away (1001): clients reconnect, to another replica; whoever does not close in a second is cut.
        for (const c of clients) c.ws.close(1001, 'server shutting down');
        const deadline = Date.now() + 1000;
        while ([...clients].some((c) => c.ws.readyState !== c.ws.CLOSED) && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 20));
        for (const c of clients) c.ws.terminate();
        await new Promise<void>((r) => wss.close(() => r()));
        announcer.close();
        unlisten();
        unlistenKeys();
      })();
      return closing;
    },
  };
  let closing: Promise<void> | undefined;
  attached.set(deps, socket);
  return socket;
}
