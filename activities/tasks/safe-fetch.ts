import http from 'node:http';
import https from 'node:https';
import { checkUrl, guardedLookup, type UrlRefusal } from '../net/ssrf';
import { StepPermanentError } from './errors';

export { isPrivateAddress } from '../net/ssrf';

export class FetchRefusedError extends StepPermanentError {}

export interface SafeFetchOptions {
  allowPrivate: boolean;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  maxBytes?: number;
  timeoutMs?: number;
  maxRedirects?: number;
  signal?: AbortSignal;
}

export interface SafeFetchResult {
  status: number;
  url: string;
  contentType: string;
  body: Buffer;
  truncated: boolean;
}

/** Task steps' wording of the shared SSRF guard (refusals are permanent step failures). */
function refusal(r: UrlRefusal): StepPermanentError {
  switch (r.reason) {
    case 'invalid':
      return new StepPermanentError(`Not a valid URL: ${r.raw.slice(0, 200)}`);
    case 'scheme':
      return new FetchRefusedError(`Refused to fetch ${r.url.protocol} URLs (http and https only).`);
    case 'credentials':
      return new FetchRefusedError('Refused to fetch a URL with credentials in it.');
    default:
      return new FetchRefusedError(`Refused to fetch ${r.url.host}: private or loopback address.`);
  }
}

const refusedLookup = (hostname: string, address: string) =>
  new FetchRefusedError(`Refused to fetch ${hostname}: it resolves to a private address (${address}).`);

function requestOnce(url: URL, opts: SafeFetchOptions, deadline: number): Promise<{ res: http.IncomingMessage; req: http.ClientRequest }> {
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(url, {
      method: opts.method ?? 'GET',
      headers: { 'user-agent': 'svc-runtime/1 (+task fetch)', accept: '*/*', ...(opts.headers ?? {}) },
      lookup: guardedLookup(opts.allowPrivate, refusedLookup),
      timeout: Math.max(1, deadline - Date.now()),
      signal: opts.signal,
    });
    req.on('response', (res) => resolve({ res, req }));
    req.on('timeout', () => req.destroy(new Error(`No answer from ${url.host} within the time limit.`)));
    req.on('error', reject);
    req.end(opts.body);
  });
}

/**
 * HTTP request with the SSRF guard on every hop (redirects re-checked), an overall time limit
 * and a size cap (the body is cut at `maxBytes` and flagged `truncated`).
 * @throws FetchRefusedError (permanent) for refused addresses and schemes; Error for network faults
 */
export async function safeFetch(rawUrl: string, opts: SafeFetchOptions): Promise<SafeFetchResult> {
  const maxBytes = opts.maxBytes ?? 2 * 1024 * 1024;
  const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
  const policy = { allowPrivate: opts.allowPrivate, makeError: refusal };
  let url = checkUrl(rawUrl, policy);
  for (let hop = 0; ; hop++) {
    const { res, req } = await requestOnce(url, opts, deadline);
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400 && res.headers.location && opts.method !== 'POST') {
      res.resume();
      if (hop >= (opts.maxRedirects ?? 5)) throw new StepPermanentError(`Too many redirects fetching ${rawUrl}.`);
      url = checkUrl(new URL(res.headers.location, url), policy);
      continue;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => req.destroy(new Error(`Fetching ${url.host} took longer than the time limit.`)), Math.max(1, deadline - Date.now()));
      res.on('data', (c: Buffer) => {
        if (size + c.length > maxBytes) {
          chunks.push(c.subarray(0, maxBytes - size));
          size = maxBytes;
          truncated = true;
          req.destroy();
          clearTimeout(timer);
          resolve();
          return;
        }
        chunks.push(c);
        size += c.length;
      });
      res.on('end', () => (clearTimeout(timer), resolve()));
      res.on('error', (e) => (clearTimeout(timer), truncated ? resolve() : reject(e)));
      req.on('error', (e) => (clearTimeout(timer), truncated ? resolve() : reject(e)));
    });
    return { status, url: url.toString(), contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks), truncated };
  }
}
