/**
 * First-token timeline of the gateway benchmark (BENCH_TRACE=1): monotonic clock marks
 * (`process.hrtime`, CLOCK_MONOTONIC, the same clock in every process of the machine) taken in a
 * server's process for each streamed request, and in the bench's process for the client and the
 * fake upstream; `bench/gateway.ts` joins them request by request (the phase is sequential) and
 * prints the median of each stage. Nothing of the app is changed: the marks come from Node's and
 * undici's diagnostics channels and from wrapping a few prototype methods in the server process
 * only while the bench runs with BENCH_TRACE.
 *
 * Server marks, in order (those a server does not pass stay NaN):
 *   in          the request is parsed (Node's `http.server.request.start`)
 *   auth        the key is authenticated (the gateway's limiter is asked to admit)
 *   dispatch    the upstream request is handed to the pool (gateway: `UpstreamCall.send`; proxy:
 *               `http.client.request.start`)
 *   upWritten   its headers are written to the upstream socket (undici's `undici:client:sendHeaders`)
 *   upHeaders   the upstream's status and headers are in
 *   upChunk     the upstream's first body bytes are in
 *   out         the first body write to the client goes to the socket (when Node flushes it)
 */
import diagnostics from 'node:diagnostics_channel';
import http from 'node:http';
import net from 'node:net';
import { Limiter } from '../api/gateway/limiter';
import { UpstreamCall } from '../activities/providers/upstream-call';

export const SERVER_MARKS = ['in', 'auth', 'dispatch', 'upWritten', 'upHeaders', 'upChunk', 'out'] as const;
export type ServerMark = (typeof SERVER_MARKS)[number];
/** The marks (and ad-hoc ones placed while investigating, see `__gwMark`). */
export type ServerRecord = Partial<Record<ServerMark, number>> & { extra?: Record<string, number> };

/** Microseconds on the machine-wide monotonic clock. */
export const nowMicros = (): number => Number(process.hrtime.bigint()) / 1000;

let recording = false;
let records: ServerRecord[] = [];
let current: ServerRecord | undefined;
const firstWrite = new WeakSet<http.ServerResponse>();

const mark = (name: ServerMark, rec = current) => {
  if (!recording || !rec || rec[name] !== undefined) return;
  rec[name] = nowMicros();
};

/** Installs the hooks in this (server) process; marks are kept between `start()` and `stop()`. */
export function installTrace(): { start(): void; stop(): ServerRecord[] } {
  diagnostics.subscribe('http.server.request.start', () => {
    if (!recording) return;
    current = {};
    records.push(current);
    mark('in');
  });
  diagnostics.subscribe('http.client.request.start', () => mark('dispatch'));
  diagnostics.subscribe('http.client.response.finish', () => {
    mark('upHeaders');
    mark('upChunk');
  });
  diagnostics.subscribe('undici:client:sendHeaders', () => mark('upWritten'));

  const admit = Limiter.prototype.admit;
  Limiter.prototype.admit = function (this: Limiter, ...args: Parameters<Limiter['admit']>) {
    mark('auth');
    return admit.apply(this, args);
  };
  const send = UpstreamCall.prototype.send;
  UpstreamCall.prototype.send = function (this: UpstreamCall, ...args: Parameters<UpstreamCall['send']>) {
    mark('dispatch');
    return send.apply(this, args);
  };
  const onStart = UpstreamCall.prototype.onResponseStart;
  UpstreamCall.prototype.onResponseStart = function (this: UpstreamCall, ...args) {
    mark('upHeaders');
    return onStart.apply(this, args);
  };
  const onData = UpstreamCall.prototype.onResponseData;
  UpstreamCall.prototype.onResponseData = function (this: UpstreamCall, ...args) {
    mark('upChunk');
    return onData.apply(this, args);
  };
  // The first body write of a response is marked when its bytes go to the socket (Node corks the
  // socket on a response write and flushes it later, or at once when the writer uncorks).
  const pending = new WeakMap<net.Socket, ServerRecord | undefined>();
  const write = http.ServerResponse.prototype.write;
  http.ServerResponse.prototype.write = function (this: http.ServerResponse, ...args: unknown[]) {
    if (recording && !firstWrite.has(this) && this.socket) {
      firstWrite.add(this);
      pending.set(this.socket, current);
    }
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as typeof write;
  const proto = net.Socket.prototype as unknown as { _writeGeneric: (...a: unknown[]) => unknown };
  const writeGeneric = proto._writeGeneric;
  proto._writeGeneric = function (this: net.Socket, ...args: unknown[]) {
    if (pending.has(this)) {
      mark('out', pending.get(this));
      pending.delete(this);
    }
    return writeGeneric.apply(this, args);
  };

  // Ad-hoc marks placed in the app's code while investigating: `globalThis.__gwMark?.('name')`.
  (globalThis as { __gwMark?: (name: string) => void }).__gwMark = (name) => {
    if (!recording || !current) return;
    const extra = (current.extra ??= {});
    extra[name] ??= nowMicros();
  };
  return {
    start() {
      records = [];
      current = undefined;
      recording = true;
    },
    stop() {
      recording = false;
      const out = records;
      records = [];
      return out;
    },
  };
}
