import type { IncomingMessage, ServerResponse } from 'node:http';
import { EventEmitter } from 'node:events';
import { pipeline } from 'node:stream';
import type Koa from 'koa';
import type { AppContext, AppExtras, AppState } from './context';
import type { AppDeps } from './deps';
import { plainJsonBody } from './json-body';
import type { Metrics } from './metrics';

type Dispatch = (ctx: AppContext, next: () => Promise<unknown>) => Promise<unknown>;

const JSON_TYPE = 'application/json; charset=utf-8';
const noop = () => Promise.resolve();

function isStream(v: unknown): v is NodeJS.ReadableStream {
  return v !== null && typeof v === 'object' && typeof (v as { pipe?: unknown }).pipe === 'function';
}

/**
 * The part of Koa's context that the middleware and the handlers of the hot routes use, over the
 * raw request and response, with Koa's semantics: `set` writes the header at once (so headers keep
 * the order Koa gives them), `body` sets the same Content-Type and status rules, and `respond`
 * ends the response as Koa's `respond` does for a JSON, text or stream body. Nothing else of Koa is
 * created per request (its three context objects, delegates, on-finished listeners, compose).
 * The members it has are checked against Koa's types (`Pick<AppContext, ...>`).
 */
export class FastContext implements Pick<
  AppContext,
  'req' | 'res' | 'state' | 'deps' | 'metrics' | 'method' | 'path' | 'headers' | 'status' | 'body'
> {
  readonly state = {} as AppState;
  /** Where the body reader puts the parsed JSON (Koa's `ctx.request.body`). */
  readonly request: { body?: unknown } = {};
  params: object = {};
  private explicitStatus = false;
  private value: unknown = undefined;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly deps: AppDeps,
    readonly metrics: Metrics,
  ) {
    // As Koa: 404 until a middleware decides.
    res.statusCode = 404;
  }

  get method(): string {
    return this.req.method ?? 'GET';
  }
  /** Only requests without a query string take this path, so the URL is the path. */
  get path(): string {
    return this.req.url ?? '/';
  }
  get query(): Record<string, string> {
    return {};
  }
  get headers(): IncomingMessage['headers'] {
    return this.req.headers;
  }

  /** A request header ('' when absent), as Koa's `ctx.get`. */
  get(field: string): string {
    const name = field.toLowerCase();
    const h = this.req.headers;
    const v = name === 'referer' || name === 'referrer' ? (h.referrer ?? h.referer) : h[name];
    return (v as string | undefined) || '';
  }

  set(field: string | Record<string, string | string[]>, val?: string | string[]): void {
    if (this.res.headersSent) return;
    if (typeof field === 'string') this.res.setHeader(field, val as string | string[]);
    else for (const [k, v] of Object.entries(field)) this.res.setHeader(k, v);
  }

  /** Koa's `type` for the full MIME types routes set (a text type gets Koa's charset). */
  set type(mime: string) {
    this.set('Content-Type', mime.startsWith('text/') && !mime.includes(';') ? `${mime}; charset=utf-8` : mime);
  }

  get status(): number {
    return this.res.statusCode;
  }
  set status(code: number) {
    if (this.res.headersSent) return;
    this.explicitStatus = true;
    this.res.statusCode = code;
  }

  get body(): unknown {
    return this.value;
  }
  /** Koa's body rules for what the hot routes set: a JSON value, a stream (SSE) or text. */
  set body(val: unknown) {
    const original = this.value;
    this.value = val;
    if (val === null || val === undefined) {
      this.res.removeHeader('Content-Type');
      this.res.removeHeader('Content-Length');
      this.res.removeHeader('Transfer-Encoding');
      return;
    }
    if (!this.explicitStatus) this.status = 200;
    const hasType = this.res.hasHeader('Content-Type');
    if (isStream(val)) {
      if (original !== val && original !== null && original !== undefined) this.res.removeHeader('Content-Length');
      if (!hasType) this.set('Content-Type', 'application/octet-stream');
      return;
    }
    if (typeof val === 'string') {
      if (!hasType)
        this.set('Content-Type', /^\s*</.test(val) ? 'text/html; charset=utf-8' : 'text/plain; charset=utf-8');
      this.set('Content-Length', String(Buffer.byteLength(val)));
      return;
    }
    this.res.removeHeader('Content-Length');
    const type = this.res.getHeader('Content-Type');
    if (!type || !/\bjson\b/i.test(String(type).split(';', 1)[0])) this.set('Content-Type', JSON_TYPE);
  }

  /**
   * An event stream written straight to the response (instead of a PassThrough that `respond`
   * would pipe): the headers go out with the first write. The body is then a `DirectStream`, which
   * closes when its writer ends it, as the PassThrough did (the usage record waits for that).
   */
  streamDirect(): DirectStream {
    const stream = new DirectStream(this.res);
    this.body = stream;
    return stream;
  }

  private get writable(): boolean {
    if (this.res.writableEnded) return false;
    const socket = this.res.socket;
    return !socket || socket.writable;
  }

  /** Ends the response as Koa's `respond` does. */
  respond(app: Koa<AppState, AppExtras>): void {
    const res = this.res;
    if (!this.writable) return void res.end();
    const body = this.value;
    if (body === null || body === undefined) {
      const text = String(res.statusCode);
      if (!res.headersSent) {
        this.set('Content-Type', 'text/plain; charset=utf-8');
        this.set('Content-Length', String(Buffer.byteLength(text)));
      }
      return void res.end(text);
    }
    if (typeof body === 'string') return void res.end(body);
    if (body instanceof DirectStream) return; // already being written
    if (isStream(body)) {
      pipeline(body, res, (err) => {
        if (err) app.emit('error', err, this);
      });
      return;
    }
    const text = JSON.stringify(body);
    if (!res.headersSent) res.setHeader('Content-Length', Buffer.byteLength(text));
    res.end(text);
  }

  /** A failure outside the error middleware (a bug): Koa's default answer, a bare 500. */
  fail(app: Koa<AppState, AppExtras>, err: unknown): void {
    app.emit('error', err, this);
    const res = this.res;
    if (res.headersSent || !this.writable) return void res.destroy();
    for (const name of res.getHeaderNames()) res.removeHeader(name);
    const text = 'Internal Server Error';
    res.statusCode = 500;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(text));
    res.end(text);
  }
}

/**
 * The body of a stream written straight to the response. A stream for the middleware that waits
 * for a stream body to close (`pipe`, `once('close')`); it closes when `end` is called.
 */
export class DirectStream extends EventEmitter {
  private first = true;

  constructor(private readonly res: ServerResponse) {
    super();
  }

  /**
   * Node corks the socket on a response write and uncorks it in a `process.nextTick`, which runs
   * only once the microtask queue is empty. The first write (the head, the role and the first
   * token) is made from a microtask, and the whole middleware chain then unwinds in microtasks
   * (meter, errors, logs, the fast path's respond): the first token would wait for all of that
   * before leaving. It is flushed at once instead (the same bytes in the same single write; the
   * later uncork finds nothing corked). Later writes keep Node's corking, so events that arrive
   * together still leave in one write.
   */
  write(chunk: string): boolean {
    const ok = this.res.write(chunk);
    if (this.first) {
      this.first = false;
      const socket = this.res.socket;
      if (socket && socket.writableCorked > 0) socket.uncork();
    }
    return ok;
  }

  end(): void {
    this.res.end();
    this.emit('close');
  }

  pipe(): never {
    throw new Error('a direct stream is written to the response, not piped');
  }
}

/** Where an event stream goes when `ctx` is a fast-path context (else undefined: set `ctx.body`). */
export function directStream(ctx: AppContext): DirectStream | undefined {
  const c = ctx as unknown;
  return c instanceof FastContext ? c.streamDirect() : undefined;
}

export type FastHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * The hot routes answered on the raw HTTP server, before Koa: the model routes (chat completions,
 * utility lanes, commons), each by its exact path, for a plain JSON body (`plainJsonBody`: a POST
 * with `application/json`, a Content-Length within the limit, no Content-Encoding) and no
 * Transfer-Encoding. They run the very middleware of the Koa app (`outer`: request id, logs and
 * metrics; draining; errors; body timeout; then the route's own stack: auth, limits, validation,
 * handler) on a `FastContext`. Anything else (a query string, another spelling of the path, other
 * methods, content types, encodings, chunked bodies) returns false and goes to Koa unchanged.
 */
export function createFastPath(opts: {
  app: Koa<AppState, AppExtras>;
  outer: Dispatch[];
  /** Each route's stack and body limit, by exact path. */
  routes: Map<string, { stack: Dispatch[]; bodyLimit: number }>;
  chain: (stack: Dispatch[]) => Dispatch;
}): FastHandler {
  const { app } = opts;
  const handlers = new Map<string, { run: Dispatch; bodyLimit: number }>();
  for (const [path, { stack, bodyLimit }] of opts.routes)
    handlers.set(path, { run: opts.chain([...opts.outer, ...stack]), bodyLimit });
  const deps = app.context.deps;
  const metrics = app.context.metrics;
  return (req, res) => {
    if (req.method !== 'POST') return false;
    const hit = handlers.get(req.url ?? '');
    if (!hit || req.headers['transfer-encoding'] !== undefined || !plainJsonBody(req, hit.bodyLimit)) return false;
    const { run } = hit;
    const ctx = new FastContext(req, res, deps, metrics);
    const c = ctx as unknown as AppContext;
    run(c, noop).then(
      () => ctx.respond(app),
      (err: unknown) => ctx.fail(app, err),
    );
    return true;
  };
}
