import type { IncomingHttpHeaders } from 'node:http';
import type { Agent, Dispatcher } from 'undici';
import { AppError } from '../../schema/errors';
import { faultFromNetwork, timeoutFault } from './errors';

/** Bytes of a streamed answer held for a slow reader before the upstream connection is paused. */
const HIGH_WATER = 64 * 1024;

export interface CallResult {
  status: number;
  headers: IncomingHttpHeaders;
  /** The whole body (non-2xx answers: empty, their bodies are dropped). */
  body: Buffer;
}

/**
 * One request to an upstream through its pool's `dispatch`, with this object as the handler:
 * status, headers and body chunks arrive as calls, and the body is either collected (`result`, a
 * JSON answer) or handed to one reader (`take()` / `wait()`, a stream). Unlike the pool's `request`, no
 * Readable stream, AsyncResource or abort-signal wiring is made per call (those were a third of
 * the upstream client's CPU per chat). `abort(reason)` ends the request at any point (also before
 * it started); every failure, the abort reason included, rejects what is awaited.
 */
export class UpstreamCall implements Dispatcher.DispatchHandler {
  /** Settles with the status and headers (streams) or the whole answer (`collect`). */
  readonly started: Promise<{ status: number; headers: IncomingHttpHeaders }>;
  readonly result: Promise<CallResult>;
  private resolveStart!: (v: { status: number; headers: IncomingHttpHeaders }) => void;
  private rejectStart!: (err: Error) => void;
  private resolveResult!: (v: CallResult) => void;
  private rejectResult!: (err: Error) => void;
  private controller?: Dispatcher.DispatchController;
  private reason?: Error;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private keep = false;
  private readonly parts: Buffer[] = [];
  private queued = 0;
  private ended = false;
  private failure?: Error;
  private wake?: () => void;

  /** `collect`: keep the body for `result` (a JSON answer); else it is read with `take()`. */
  constructor(private readonly collect: boolean) {
    this.started = new Promise((resolve, reject) => ((this.resolveStart = resolve), (this.rejectStart = reject)));
    this.result = new Promise((resolve, reject) => ((this.resolveResult = resolve), (this.rejectResult = reject)));
    // Callers await one of the two; the other must not become an unhandled rejection.
    this.started.catch(() => undefined);
    this.result.catch(() => undefined);
  }

  /** Sends the request on `pool`. */
  send(pool: Agent, opts: Dispatcher.DispatchOptions): this {
    pool.dispatch(opts, this);
    return this;
  }

  /** The answer ended or failed: nothing left to abort. */
  get settled(): boolean {
    return this.ended || this.failure !== undefined;
  }

  abort(reason: Error): void {
    if (this.reason || this.settled) return;
    this.reason = reason;
    this.controller?.abort(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.reason) controller.abort(this.reason);
  }

  onResponseStart(_c: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    if (status < 200) return; // 1xx: informational
    this.status = status;
    this.headers = headers;
    this.keep = status < 300;
    this.resolveStart({ status, headers });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.keep) return;
    this.parts.push(chunk);
    if (this.collect) return;
    this.queued += chunk.length;
    if (this.queued > HIGH_WATER) controller.pause();
    this.wakeReader();
  }

  onResponseEnd(): void {
    this.ended = true;
    const body = !this.collect || this.parts.length === 0 ? Buffer.alloc(0) : Buffer.concat(this.parts);
    this.resolveResult({ status: this.status, headers: this.headers, body });
    this.wakeReader();
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.failure = err;
    this.rejectStart(err);
    this.rejectResult(err);
    this.wakeReader();
  }

  private wakeReader(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /**
   * What arrived of a streamed answer since the last call ([] when nothing new yet), or null once
   * it ended and everything was taken. @throws the failure, once what arrived before it was taken
   */
  take(): Buffer[] | null {
    if (this.parts.length > 0) {
      const parts = this.parts.splice(0);
      this.queued = 0;
      if (this.controller?.paused) this.controller.resume();
      return parts;
    }
    if (this.failure) throw this.failure;
    return this.ended ? null : [];
  }

  /** Resolves when more of the stream arrived, or it ended or failed. */
  wait(): Promise<void> {
    if (this.parts.length > 0 || this.ended || this.failure) return Promise.resolve();
    return new Promise<void>((resolve) => (this.wake = resolve));
  }
}

/**
 * Limits of one attempt: the caller's abort plus our own timers, all ending the upstream call. The
 * caller's abort is forwarded by one listener (removed when the attempt ends) rather than
 * `AbortSignal.any`, whose composite signal and weak references showed in the request profile; a
 * non-streaming call, whose idle and overall limits are the same, runs one timer.
 *
 * The timers are armed in the event loop's check phase after the call is dispatched (`attach`), not
 * before: off the path to the upstream request, which undici writes on an idle keep-alive socket
 * from that same check phase (queued before ours). A call that cannot be written at once (no free
 * connection, a slow connect) is timed all the same; the limits count from then (well under a
 * millisecond after the dispatch).
 */
export class AttemptControl {
  private call?: UpstreamCall;
  private idle?: NodeJS.Timeout;
  private overall?: NodeJS.Timeout;
  private readonly onOuterAbort?: () => void;
  /** The overall timer fires no later than the idle one could: no idle timer then. */
  private readonly idleRedundant: boolean;
  private armed = false;
  private finished = false;
  private reason?: Error;
  timedOutAfter = 0;

  constructor(
    private readonly outer: AbortSignal | undefined,
    private readonly idleMs: number,
    private readonly overallMs: number,
  ) {
    if (outer?.aborted) this.abort(outer.reason as Error);
    else if (outer) {
      this.onOuterAbort = () => this.abort(outer.reason as Error);
      outer.addEventListener('abort', this.onOuterAbort, { once: true });
    }
    // setTimeout overflows above 2^31-1 ms (it would fire at once): no overall timer then.
    // With idle ≥ overall the idle timer could never fire first: the overall one is enough.
    this.idleRedundant = overallMs < 2 ** 31 - 1 && idleMs >= overallMs;
  }

  /** The call these limits end (an abort that came first ends it at once); the timers start after its dispatch. */
  attach(call: UpstreamCall) {
    this.call = call;
    if (this.reason) call.abort(this.reason);
    setImmediate(() => this.arm());
  }

  /** Starts the timers (once, and not after the attempt ended). */
  arm() {
    if (this.armed || this.finished) return;
    this.armed = true;
    const overallMs = this.overallMs;
    if (overallMs < 2 ** 31 - 1) this.overall = setTimeout(() => this.expire(overallMs), overallMs);
    this.touch();
  }

  private abort(reason: Error) {
    this.reason ??= reason;
    this.call?.abort(reason);
  }

  private expire(ms: number) {
    this.timedOutAfter = ms;
    this.abort(new Error('timeout'));
  }

  /** Resets the idle timer (first byte, and every streamed read). */
  touch() {
    if (this.idleRedundant || !this.armed || this.finished) return;
    if (this.idle) this.idle.refresh();
    else this.idle = setTimeout(() => this.expire(this.idleMs), this.idleMs);
  }

  /** Turns whatever was thrown into the error the router should see. */
  translate(provider: string, err: unknown, started: boolean): unknown {
    if (this.outer?.aborted) return this.outer.reason;
    if (this.timedOutAfter) return timeoutFault(provider, this.timedOutAfter);
    if (err instanceof AppError) return err;
    return faultFromNetwork(provider, err, started);
  }

  done() {
    this.finished = true;
    clearTimeout(this.idle);
    clearTimeout(this.overall);
    if (this.onOuterAbort) this.outer?.removeEventListener('abort', this.onOuterAbort);
  }

  /** Stops the upstream request if it is still going (early consumer exit). */
  cancel() {
    this.done();
    if (!this.call?.settled) this.abort(new Error('closed'));
  }
}
