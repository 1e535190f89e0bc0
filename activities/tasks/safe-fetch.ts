import { FetchFailure, guardedRequest } from '../net/guarded-http';
import type { PrivateFetchPolicy } from '../net/ssrf';
import { StepPermanentError } from './errors';

export { isPrivateAddress } from '../net/ssrf';

export class FetchRefusedError extends StepPermanentError {}

export interface SafeFetchOptions {
  allowPrivate: PrivateFetchPolicy;
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

/**
 * Task steps' wording of the one guarded HTTP path (`net/guarded-http.ts`): refused addresses and
 * schemes are permanent step failures, network faults retryable errors. The body is cut at
 * `maxBytes` and flagged `truncated`.
 */
export async function safeFetch(rawUrl: string, opts: SafeFetchOptions): Promise<SafeFetchResult> {
  try {
    const r = await guardedRequest(rawUrl, {
      ...opts,
      maxBytes: opts.maxBytes ?? 2 * 1024 * 1024,
      overflow: 'truncate',
      userAgent: 'svc-runtime/1 (+task fetch)',
    });
    return { status: r.status, url: r.url, contentType: r.contentType, body: r.body, truncated: r.truncated };
  } catch (err) {
    if (!(err instanceof FetchFailure)) throw err;
    if (err.kind === 'refused') throw new FetchRefusedError(err.message);
    if (err.kind === 'invalid') throw new StepPermanentError(err.message);
    if (err.kind === 'redirects') throw new StepPermanentError(`Too many redirects fetching ${rawUrl}.`);
    throw new Error(err.message);
  }
}
