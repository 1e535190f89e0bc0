import { createHash } from 'node:crypto';
import type { CommonQueryMethods } from 'slonik';
import { AppError } from '../../schema/errors';
import type { WebFetchBody, WebPage } from '../../schema/web';
import { extractDocument } from '../knowledge/extract';
import { looksLikeHtml } from '../knowledge/sniff';
import { FetchFailure, guardedRequest, type GuardedResponse } from '../net/guarded-http';
import type { PrivateFetchPolicy } from '../net/ssrf';
import { getCachedPage, putCachedPage, refreshCachedPage } from '../store/web-cache';
import { decodeBody } from './charset';
import { checkSelector } from './extract-html';
import { extractHtmlInThread } from './extract-pool';
import { truncateBlocks } from './truncate';

/** The page as extracted and cached (before the per-request format, links and token cut). */
export interface ExtractedPage {
  url: string;
  final_url: string;
  status: number;
  content_type: string;
  charset: string | null;
  title: string | null;
  byline: string | null;
  site_name: string | null;
  published_at: string | null;
  lang: string | null;
  markdown: string;
  text: string;
  html?: string;
  links: Array<{ text: string; url: string }>;
  truncated: boolean;
  fetched_at: string;
}

export interface FetchPageDeps {
  db: CommonQueryMethods;
  allowPrivate: PrivateFetchPolicy;
  cacheTtlSeconds: number;
}

const MAX_BYTES = 10 * 1024 * 1024;

/** Maps a guard/network failure to the API's errors: refused or invalid → 400, timeout → 504, else 502. */
export function fetchError(err: unknown): unknown {
  if (!(err instanceof FetchFailure)) return err;
  if (err.kind === 'invalid' || err.kind === 'refused')
    return new AppError('invalid_request', `url: ${err.message}`, {
      details: [{ path: 'body.url', message: err.message }],
    });
  if (err.kind === 'timeout') return new AppError('upstream_timeout', err.message);
  return new AppError('upstream_error', err.message);
}

/**
 * Whether zero bytes in the head of a body still leave it text: a UTF-16 byte-order mark or declared UTF-16/32 (every
 * ASCII character has one), or a declared text type with a few stray NULs (a broken CMS; browsers show the page and
 * drop them). Otherwise zero bytes mean a binary file, whatever the server calls it.
 */
function textWithNuls(head: Buffer, ct: string): boolean {
  if (head[0] === 0xff || head[0] === 0xfe || /charset\s*=\s*["']?utf-?(16|32)/.test(ct)) return true;
  if (!/^text\/|html|xml|json|markdown/.test(ct)) return false;
  let zeros = 0;
  for (const b of head) if (b === 0) zeros++;
  return zeros <= head.length / 100;
}

function kindOf(body: Buffer, contentType: string): 'pdf' | 'json' | 'html' | 'markdown' | 'text' | 'binary' {
  if (body.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  const ct = contentType.toLowerCase();
  if (/^application\/pdf/.test(ct)) return 'pdf';
  const head = body.subarray(0, 8192);
  if (head.includes(0) && !textWithNuls(head, ct)) return 'binary';
  if (/json/.test(ct)) return 'json';
  if (/html|xhtml/.test(ct)) return 'html';
  if (/markdown/.test(ct)) return 'markdown';
  const start = head.toString('latin1').trimStart();
  if (/^[[{]/.test(start) && !/^text\/plain/.test(ct)) return 'json';
  if (looksLikeHtml(start)) return 'html';
  if (/^(image|audio|video|font)\/|octet-stream|zip/.test(ct)) return 'binary';
  return 'text';
}

/** Extracts a downloaded body by its detected kind. @throws AppError unsupported_media_type for binaries */
export async function extractBody(
  res: Pick<GuardedResponse, 'body' | 'contentType' | 'url'>,
  opts: { selector?: string },
): Promise<Omit<ExtractedPage, 'url' | 'status' | 'fetched_at' | 'truncated'>> {
  const kind = kindOf(res.body, res.contentType);
  const base = {
    final_url: res.url,
    title: null,
    byline: null,
    site_name: null,
    published_at: null,
    lang: null,
    links: [],
  };
  if (kind === 'binary')
    throw new AppError(
      'unsupported_media_type',
      `The URL returned ${res.contentType || 'binary content'}, which is not a page, PDF, JSON or text.`,
    );
  if (kind === 'pdf') {
    const doc = await extractDocument(res.body, 'application/pdf');
    return {
      ...base,
      content_type: 'application/pdf',
      charset: null,
      title: doc.title ?? null,
      markdown: doc.text,
      text: doc.text,
    };
  }
  const { text, charset } = decodeBody(res.body, res.contentType);
  if (kind === 'json') {
    let pretty = text;
    try {
      pretty = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      // Declared JSON that does not parse is returned as it came.
    }
    return {
      ...base,
      content_type: 'application/json',
      charset,
      markdown: '```json\n' + pretty + '\n```',
      text: pretty,
    };
  }
  if (kind === 'html') {
    const page = await extractHtmlInThread(text, { url: res.url, selector: opts.selector });
    return {
      ...base,
      content_type: 'text/html',
      charset,
      title: page.title ?? null,
      byline: page.byline ?? null,
      site_name: page.siteName ?? null,
      published_at: page.publishedAt ?? null,
      lang: page.lang ?? null,
      markdown: page.markdown,
      text: page.text,
      html: page.html,
      links: page.links,
    };
  }
  const title = kind === 'markdown' ? (/^#{1,3}\s+(.+)$/m.exec(text)?.[1]?.trim() ?? null) : null;
  return {
    ...base,
    content_type: kind === 'markdown' ? 'text/markdown' : 'text/plain',
    charset,
    title,
    markdown: text.trim(),
    text: text.trim(),
  };
}

function ttlOf(headers: GuardedResponse['headers'], fallback: number): number | null {
  const cc = String(headers['cache-control'] ?? '').toLowerCase();
  if (/no-store/.test(cc)) return null;
  const maxAge = /max-age=(\d+)/.exec(cc);
  return maxAge ? Math.min(fallback, Number(maxAge[1])) : fallback;
}

/** The per-request view: format, links and the `max_tokens` cut at a block boundary. */
export function shapePage(page: ExtractedPage, req: WebFetchBody, cached: boolean): WebPage {
  const primary =
    req.format === 'text' ? page.text : req.format === 'html' ? (page.html ?? page.markdown) : page.markdown;
  const cut = truncateBlocks(primary, req.max_tokens);
  const view = (s: string) => (req.max_tokens ? truncateBlocks(s, req.max_tokens).content : s);
  const rest: Partial<ExtractedPage> = { ...page };
  delete rest.links;
  delete rest.html;
  return {
    ...rest,
    markdown: req.format === 'markdown' ? cut.content : view(page.markdown),
    text: req.format === 'text' ? cut.content : view(page.text),
    ...(req.format === 'html' ? { html: cut.content } : {}),
    ...(req.include_links ? { links: page.links } : {}),
    token_estimate: cut.tokens,
    truncated: page.truncated || cut.truncated,
    cached,
  } as WebPage;
}

/**
 * GET a URL through the fetch guard and extract it, with the tenant's per-URL cache: a fresh entry
 * is served as is; a stale one is revalidated with If-None-Match / If-Modified-Since (304 keeps
 * it); `cache: false` always downloads (and refreshes the entry).
 */
export async function fetchPage(
  deps: FetchPageDeps,
  tenantId: string,
  req: WebFetchBody,
  signal?: AbortSignal,
): Promise<WebPage> {
  if (req.selector !== undefined) checkSelector(req.selector);
  const cacheKey = createHash('sha256')
    .update(`${req.url}\n${req.selector ?? ''}`)
    .digest('hex');
  const row = req.cache ? await getCachedPage(deps.db, tenantId, cacheKey) : null;
  if (row?.fresh) return shapePage(row.page as ExtractedPage, req, true);
  const conditional: Record<string, string> = {};
  if (row?.etag) conditional['if-none-match'] = row.etag;
  if (row?.last_modified) conditional['if-modified-since'] = row.last_modified;
  let res: GuardedResponse;
  try {
    res = await guardedRequest(req.url, {
      allowPrivate: deps.allowPrivate,
      refuseLocalNames: true,
      maxBytes: MAX_BYTES,
      overflow: 'truncate',
      timeoutMs: 20_000,
      signal,
      headers: {
        accept: 'text/html,application/xhtml+xml,application/pdf,application/json,text/plain;q=0.9,*/*;q=0.5',
        ...conditional,
      },
    });
  } catch (err) {
    throw fetchError(err);
  }
  if (res.status === 304 && row) {
    await refreshCachedPage(deps.db, tenantId, cacheKey, deps.cacheTtlSeconds);
    return shapePage({ ...(row.page as ExtractedPage), status: 304 }, req, true);
  }
  if (res.status >= 400 || res.status === 304) {
    throw new AppError(
      'upstream_error',
      `${new URL(res.url).host} answered HTTP ${res.status} for ${new URL(res.url).pathname}.`,
    );
  }
  const extracted = await extractBody(res, { selector: req.selector });
  const page: ExtractedPage = {
    url: req.url,
    status: res.status,
    ...extracted,
    truncated: res.truncated,
    fetched_at: new Date().toISOString(),
  };
  const ttl = ttlOf(res.headers, deps.cacheTtlSeconds);
  if (ttl !== null) {
    const header = (h: string | string[] | undefined) => (Array.isArray(h) ? h[0] : h) || undefined;
    await putCachedPage(deps.db, {
      tenantId,
      cacheKey,
      url: req.url,
      etag: header(res.headers.etag),
      lastModified: header(res.headers['last-modified']),
      page,
      ttlSeconds: ttl,
    });
  }
  return shapePage(page, req, false);
}
