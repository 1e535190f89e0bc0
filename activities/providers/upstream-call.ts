import type { IncomingHttpHeaders } from 'node:http';
import type { Agent, Dispatcher } from 'undici';

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
 * JSON answer) or handed to one reader (`chunks()`, a stream). Unlike the pool's `request`, no
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

  /** `collect`: keep the body for `result` (a JSON answer); else it is read with `chunks()`. */
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

  abort(reason: Error): void {
    if (this.reason) return;
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
    this.wake?.();
  }

  onResponseEnd(): void {
    this.ended = true;
    const body = !this.collect || this.parts.length === 0 ? Buffer.alloc(0) : Buffer.concat(this.parts);
    this.resolveResult({ status: this.status, headers: this.headers, body });
    this.wake?.();
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.failure = err;
    this.rejectStart(err);
    this.rejectResult(err);
    this.wake?.();
  }

  /** The body of a streamed answer, chunk by chunk as it arrives. */
  async *chunks(): AsyncGenerator<Buffer> {
    for (;;) {
      if (this.parts.length > 0) {
        const chunk = this.parts.shift()!;
        this.queued -= chunk.length;
        if (this.controller?.paused && this.queued <= HIGH_WATER / 2) this.controller.resume();
        yield chunk;
      } else if (this.failure) throw this.failure;
      else if (this.ended) return;
      else await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}
