import { AppError } from '../../schema/errors';
import type { SupportedMediaType } from '../../schema/knowledge';
import { extractDocument, type Extracted } from './extract';
import { detectMediaType } from './sniff';
import { extractBody } from '../web/fetch-page';
import { FetchFailure, guardedRequest } from '../net/guarded-http';
import type { PrivateFetchPolicy } from '../net/ssrf';

/** An upstream answer that a retry cannot change (HTTP 4xx, over the size limit, too many redirects). */
export class UpstreamRejected extends AppError {
  constructor(message: string) {
    super('upstream_error', message);
    this.name = 'UpstreamRejected';
  }
}

export interface FetchLimits {
  allowPrivate: PrivateFetchPolicy;
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

function mapFailure(err: unknown): unknown {
  if (!(err instanceof FetchFailure)) return err; // cancellation (e.g. worker shutdown) stays a cancellation
  switch (err.kind) {
    case 'invalid':
    case 'refused':
      return new AppError('invalid_request', err.message);
    case 'timeout':
      return new AppError('upstream_timeout', `${err.host} did not answer in time.`);
    case 'too_large':
      return new UpstreamRejected(err.message.replace('The response', 'The page'));
    case 'redirects':
      return new UpstreamRejected('Too many redirects.');
    default:
      return new AppError('upstream_error', err.message);
  }
}

/**
 * GET through the one guarded HTTP path (`net/guarded-http.ts`: the guard on every hop, a size cap,
 * an overall time limit), worded for knowledge ingestion.
 * @throws AppError invalid_request (refused URL), upstream_error (HTTP error, too large), upstream_timeout
 */
export async function fetchWeb(raw: string, limits: FetchLimits): Promise<Fetched> {
  let r;
  try {
    r = await guardedRequest(raw, {
      allowPrivate: limits.allowPrivate,
      refuseLocalNames: true,
      maxBytes: limits.maxBytes,
      overflow: 'fail',
      timeoutMs: limits.timeoutMs,
      maxRedirects: limits.maxRedirects,
      signal: limits.signal,
      userAgent: 'svc-runtime/0.1 (+knowledge ingestion)',
      headers: { accept: 'text/html,text/plain,text/markdown,application/pdf,*/*;q=0.5' },
    });
  } catch (err) {
    throw mapFailure(err);
  }
  if (r.status >= 400) {
    const message = `${new URL(r.url).host} answered HTTP ${r.status} for ${new URL(r.url).pathname}.`;
    throw r.status >= 500 || r.status === 408 || r.status === 429
      ? new AppError('upstream_error', message)
      : new UpstreamRejected(message);
  }
  return { finalUrl: r.url, contentType: r.contentType, body: r.body };
}

/** The text type a Content-Type declares (HTML, Markdown, else plain for any other text or JSON), or undefined. */
function declaredTextType(contentType: string): SupportedMediaType | undefined {
  const ct = contentType.toLowerCase();
  if (/html/.test(ct)) return 'text/html';
  if (/markdown/.test(ct)) return 'text/markdown';
  if (/^text\/|json/.test(ct)) return 'text/plain';
  return undefined;
}

/** Fetches a page or file and extracts its readable text; the type is sniffed from the bytes. */
export async function fetchDocument(
  raw: string,
  limits: FetchLimits,
): Promise<Extracted & Fetched & { mediaType: SupportedMediaType }> {
  const fetched = await fetchWeb(raw, limits);
  // Bytes the sniffer calls binary (a stray NUL, a UTF-16 body it takes for audio) that the server declares as text
  // are read as that text by web-fetch's extraction; when that refuses them too, the sniffer's answer stands.
  let refused: AppError | undefined;
  let mediaType = await detectMediaType(fetched.body).catch((err: unknown) => {
    const declared = declaredTextType(fetched.contentType);
    if (!declared || !(err instanceof AppError && err.code === 'unsupported_media_type')) throw err;
    refused = err;
    return declared;
  });
  // A server-declared HTML page whose start does not look like HTML (fragments) is still HTML.
  if (mediaType === 'text/plain' && /^text\/html/i.test(fetched.contentType)) mediaType = 'text/html';
  // Pages and text go through web-fetch's extraction (charset from headers/meta, main content,
  // JSON); PDF and DOCX through the document parsers (web-fetch uses the same PDF parser).
  if (mediaType.startsWith('text/')) {
    const page = await extractBody(
      { body: fetched.body, contentType: fetched.contentType, url: fetched.finalUrl },
      {},
    ).catch((err: unknown) => {
      throw refused && err instanceof AppError && err.code === 'unsupported_media_type' ? refused : err;
    });
    const text = page.text.trim();
    if (!text) throw new AppError('invalid_request', 'No text could be extracted from the page.');
    return { ...fetched, title: page.title?.replace(/\s+/g, ' ').slice(0, 300) ?? undefined, text, mediaType };
  }
  const extracted = await extractDocument(fetched.body, mediaType, fetched.finalUrl);
  return { ...fetched, ...extracted, mediaType };
}
