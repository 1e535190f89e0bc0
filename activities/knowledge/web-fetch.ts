import http from 'node:http';
import https from 'node:https';
import zlib from 'node:zlib';
import { AppError } from '../../schema/errors';
import type { SupportedMediaType } from '../../schema/knowledge';
import { extractDocument, type Extracted } from './extract';
import { detectMediaType } from './sniff';
import { checkUrl, guardedLookup } from './ssrf';

/** An upstream answer that a retry cannot change (HTTP 4xx, over the size limit, too many redirects). */
export class UpstreamRejected extends AppError {
  constructor(message: string) {
    super('upstream_error', message);
    this.name = 'UpstreamRejected';
  }
}

export interface FetchLimits {
  allowPrivate: boolean;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects?: number;
  signal?: AbortSignal;
}

export interface Fetched {
  finalUrl: string;
  contentType: string;
  body: Buffer;
}

function once(url: URL, limits: FetchLimits, signal: AbortSignal): Promise<{ status: number; location?: string; contentType: string; body: Buffer }> {
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request(
      url,
      {
        method: 'GET',
        lookup: guardedLookup(limits.allowPrivate),
        signal,
        headers: { 'user-agent': 'svc-runtime/0.1 (+knowledge ingestion)', accept: 'text/html,text/plain,text/markdown,application/pdf,*/*;q=0.5', 'accept-encoding': 'gzip, deflate, br' },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && res.headers.location) {
          res.resume();
          return resolve({ status, location: res.headers.location, contentType: '', body: Buffer.alloc(0) });
        }
        const declared = Number(res.headers['content-length'] ?? 0);
        if (declared > limits.maxBytes) {
          res.destroy();
          return reject(new UpstreamRejected(`The page is larger than the ${limits.maxBytes}-byte limit.`));
        }
        const enc = String(res.headers['content-encoding'] ?? '').toLowerCase();
        const stream =
          enc === 'gzip' ? res.pipe(zlib.createGunzip()) : enc === 'deflate' ? res.pipe(zlib.createInflate()) : enc === 'br' ? res.pipe(zlib.createBrotliDecompress()) : res;
        const parts: Buffer[] = [];
        let size = 0;
        stream.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > limits.maxBytes) {
            res.destroy();
            stream.destroy();
            reject(new UpstreamRejected(`The page is larger than the ${limits.maxBytes}-byte limit.`));
          } else parts.push(chunk);
        });
        stream.on('error', (err) => reject(err));
        stream.on('end', () => resolve({ status, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(parts) }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function mapError(err: unknown, url: URL, timedOut: boolean, outer?: AbortSignal): unknown {
  if (err instanceof AppError) return err;
  if (outer?.aborted) return outer.reason ?? err; // cancellation (e.g. worker shutdown) stays a cancellation
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'ESSRF') return new AppError('invalid_request', e.message);
  if (timedOut) return new AppError('upstream_timeout', `${url.host} did not answer in time.`);
  if (e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN') return new AppError('upstream_error', `Host ${url.hostname} could not be resolved.`);
  return new AppError('upstream_error', `Fetching ${url.host} failed: ${e.code ?? e.message?.slice(0, 120) ?? 'error'}.`);
}

/**
 * GET with the SSRF guard on every hop (redirects re-checked), a size cap and an overall time limit.
 * @throws AppError invalid_request (refused URL), upstream_error (HTTP error, too large), upstream_timeout
 */
export async function fetchWeb(raw: string, limits: FetchLimits): Promise<Fetched> {
  let url = checkUrl(raw, limits.allowPrivate);
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, limits.timeoutMs);
  const onOuter = () => controller.abort(limits.signal?.reason);
  limits.signal?.addEventListener('abort', onOuter, { once: true });
  try {
    for (let hop = 0; hop <= (limits.maxRedirects ?? 5); hop++) {
      let r;
      try {
        r = await once(url, limits, controller.signal);
      } catch (err) {
        throw mapError(err, url, timedOut, limits.signal);
      }
      if (r.location) {
        url = checkUrl(new URL(r.location, url).toString(), limits.allowPrivate);
        continue;
      }
      if (r.status >= 400) {
        const message = `${url.host} answered HTTP ${r.status} for ${url.pathname}.`;
        throw r.status >= 500 || r.status === 408 || r.status === 429 ? new AppError('upstream_error', message) : new UpstreamRejected(message);
      }
      return { finalUrl: url.toString(), contentType: r.contentType, body: r.body };
    }
    throw new UpstreamRejected('Too many redirects.');
  } finally {
    clearTimeout(timer);
    limits.signal?.removeEventListener('abort', onOuter);
  }
}

/** Fetches a page or file and extracts its readable text; the type is sniffed from the bytes. */
export async function fetchDocument(raw: string, limits: FetchLimits): Promise<Extracted & Fetched & { mediaType: SupportedMediaType }> {
  const fetched = await fetchWeb(raw, limits);
  let mediaType = await detectMediaType(fetched.body);
  // A server-declared HTML page whose start does not look like HTML (fragments) is still HTML.
  if (mediaType === 'text/plain' && /^text\/html/i.test(fetched.contentType)) mediaType = 'text/html';
  const extracted = await extractDocument(fetched.body, mediaType, fetched.finalUrl);
  return { ...fetched, ...extracted, mediaType };
}
