import http from 'node:http';
import https from 'node:https';
import zlib from 'node:zlib';
import type { Readable } from 'node:stream';
import { checkUrl, guardedLookup, type PrivateFetchPolicy, type UrlRefusal } from './ssrf';

// The one server-side HTTP path: web-fetch, web-search adapters, research, repo clones' host
// check, knowledge web ingest and the task fetch/webhook steps all go through `guardedRequest`.
// Callers word the failures their own way by mapping `FetchFailure.kind`.

export type FetchFailureKind =
  'invalid' | 'refused' | 'timeout' | 'network' | 'dns' | 'too_large' | 'redirects' | 'aborted';

export class FetchFailure extends Error {
  constructor(
    readonly kind: FetchFailureKind,
    message: string,
    readonly host?: string,
  ) {
    super(message);
    this.name = 'FetchFailure';
  }
}

export interface GuardedRequestOptions {
  allowPrivate: PrivateFetchPolicy;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Byte cap on the (decoded) body. */
  maxBytes?: number;
  /** What to do past `maxBytes`: cut and flag `truncated` (default) or fail with `too_large`. */
  overflow?: 'truncate' | 'fail';
  /** Overall time limit, all hops included. */
  timeoutMs?: number;
  maxRedirects?: number;
  /** Refuse names local by convention (localhost, *.local, *.internal) before resolving them. */
  refuseLocalNames?: boolean;
  /** Ask for and decode gzip/deflate/br. */
  decompress?: boolean;
  signal?: AbortSignal;
  userAgent?: string;
}

export interface GuardedResponse {
  status: number;
  /** The URL that answered (after redirects). */
  url: string;
  headers: http.IncomingHttpHeaders;
  contentType: string;
  body: Buffer;
  truncated: boolean;
  redirects: number;
}

function refusal(r: UrlRefusal): FetchFailure {
  switch (r.reason) {
    case 'invalid':
      return new FetchFailure('invalid', `Not a valid URL: ${r.raw.slice(0, 200)}`);
    case 'scheme':
      return new FetchFailure('refused', `Refused to fetch ${r.url.protocol} URLs (http and https only).`, r.url.host);
    case 'credentials':
      return new FetchFailure('refused', 'Refused to fetch a URL with credentials in it.', r.url.host);
    default:
      return new FetchFailure('refused', `Refused to fetch ${r.url.host}: private or loopback address.`, r.host);
  }
}

const lookupRefusal = (hostname: string, address: string) =>
  Object.assign(
    new FetchFailure(
      'refused',
      `Refused to fetch ${hostname}: it resolves to a private address (${address}).`,
      hostname,
    ),
    { code: 'ESSRF' },
  );

function decoded(res: http.IncomingMessage, on: boolean): Readable {
  if (!on) return res;
  const enc = String(res.headers['content-encoding'] ?? '')
    .toLowerCase()
    .trim();
  if (enc === 'gzip' || enc === 'x-gzip') return res.pipe(zlib.createGunzip());
  if (enc === 'deflate') return res.pipe(zlib.createInflate());
  if (enc === 'br') return res.pipe(zlib.createBrotliDecompress());
  return res;
}

async function readBody(
  res: http.IncomingMessage,
  opts: GuardedRequestOptions,
): Promise<{ body: Buffer; truncated: boolean }> {
  const max = opts.maxBytes ?? 5 * 1024 * 1024;
  if (
    opts.overflow === 'fail' &&
    Number(res.headers['content-length'] ?? 0) > max &&
    !res.headers['content-encoding']
  ) {
    res.destroy();
    throw new FetchFailure('too_large', `The response is larger than the ${max}-byte limit.`);
  }
  const stream = decoded(res, opts.decompress ?? true);
  const parts: Buffer[] = [];
  let size = 0;
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (truncated: boolean) => {
      if (done) return;
      done = true;
      resolve({ body: Buffer.concat(parts), truncated });
    };
    stream.on('data', (chunk: Buffer) => {
      if (done) return;
      if (size + chunk.length > max) {
        if (opts.overflow === 'fail') {
          done = true;
          res.destroy();
          stream.destroy();
          reject(new FetchFailure('too_large', `The response is larger than the ${max}-byte limit.`));
          return;
        }
        parts.push(chunk.subarray(0, max - size));
        size = max;
        res.destroy();
        finish(true);
        return;
      }
      parts.push(chunk);
      size += chunk.length;
    });
    stream.on('end', () => finish(false));
    stream.on('error', (e) => (done ? undefined : ((done = true), reject(e))));
    res.on('error', (e) => (done ? undefined : ((done = true), reject(e))));
  });
}

function once(url: URL, opts: GuardedRequestOptions, signal: AbortSignal): Promise<http.IncomingMessage> {
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request(url, {
      method: opts.method ?? 'GET',
      signal,
      lookup: guardedLookup(opts.allowPrivate, lookupRefusal),
      headers: {
        'user-agent': opts.userAgent ?? 'svc-runtime/0.1 (+web)',
        accept: '*/*',
        ...((opts.decompress ?? true) ? { 'accept-encoding': 'gzip, deflate, br' } : {}),
        ...(opts.headers ?? {}),
      },
    });
    req.on('response', resolve);
    req.on('error', reject);
    req.end(opts.body);
  });
}

function mapError(err: unknown, url: URL, timedOut: boolean, outer?: AbortSignal): unknown {
  if (err instanceof FetchFailure) return err;
  if (outer?.aborted) return outer.reason ?? new FetchFailure('aborted', 'The fetch was cancelled.');
  const e = err as NodeJS.ErrnoException & { cause?: unknown };
  if (e.cause instanceof FetchFailure) return e.cause;
  if (timedOut) return new FetchFailure('timeout', `${url.host} did not answer within the time limit.`, url.host);
  if (e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN')
    return new FetchFailure('dns', `Host ${url.hostname} could not be resolved.`, url.host);
  return new FetchFailure(
    'network',
    `Fetching ${url.host} failed: ${e.code ?? e.message?.slice(0, 120) ?? 'error'}.`,
    url.host,
  );
}

/**
 * An HTTP request through the fetch guard: scheme and literal-address check before any
 * connection, DNS answers checked at connect time (the socket uses the checked address, so no
 * rebinding), the same on every redirect hop; a byte cap and one overall time limit.
 * @throws FetchFailure (or the outer signal's reason when `signal` aborts)
 */
export async function guardedRequest(raw: string | URL, opts: GuardedRequestOptions): Promise<GuardedResponse> {
  const policy = { allowPrivate: opts.allowPrivate, refuseLocalNames: opts.refuseLocalNames, makeError: refusal };
  let url = checkUrl(raw, policy);
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => ((timedOut = true), controller.abort()), opts.timeoutMs ?? 15_000);
  const onOuter = () => controller.abort(opts.signal?.reason);
  if (opts.signal?.aborted) onOuter();
  opts.signal?.addEventListener('abort', onOuter, { once: true });
  try {
    for (let hop = 0; ; hop++) {
      let res: http.IncomingMessage;
      try {
        res = await once(url, opts, controller.signal);
      } catch (err) {
        throw mapError(err, url, timedOut, opts.signal);
      }
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && status !== 304 && res.headers.location && opts.method !== 'POST') {
        res.resume();
        if (hop >= (opts.maxRedirects ?? 5)) throw new FetchFailure('redirects', 'Too many redirects.', url.host);
        url = checkUrl(new URL(res.headers.location, url), policy);
        continue;
      }
      try {
        const { body, truncated } = await readBody(res, opts);
        return {
          status,
          url: url.toString(),
          headers: res.headers,
          contentType: String(res.headers['content-type'] ?? ''),
          body,
          truncated,
          redirects: hop,
        };
      } catch (err) {
        throw mapError(err, url, timedOut, opts.signal);
      }
    }
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onOuter);
  }
}
