import type { SearchIntent, WebSearchBody } from '../../schema/web';
import { storableText } from '../../schema/storable';
import { guardedRequest } from '../net/guarded-http';
import type { SearchEngineConfig } from './search-config';
import { SEARXNG_CATEGORY } from './search-intent';

export interface EngineHit {
  title: string;
  url: string;
  snippet: string;
  published_at?: string;
}

export interface EngineQuery {
  query: string;
  intent: SearchIntent;
  count: number;
  timeRange?: WebSearchBody['time_range'];
  includeDomains?: string[];
  excludeDomains?: string[];
  signal?: AbortSignal;
}

/** Hits read per engine answer: more than any `max_results` (50) asks for; the rest is never looked at. */
const MAX_HITS = 100;

/** An engine's text, made storable (NUL and lone surrogates → U+FFFD): results end up in runs, tasks and prompts. */
const str = (v: unknown) => (typeof v === 'string' ? storableText(v) : '');
/** The URL as the WHATWG parser writes it (controls and bad escapes percent-encoded), or '' when it does not parse. */
const href = (v: unknown) => {
  const s = str(v);
  return URL.canParse(s) ? new URL(s).href : '';
};

/** The result objects of an engine's answer; anything but a list where the list belongs is the engine's error. */
function hitsOf(engine: SearchEngineConfig, data: unknown, pick: (d: Record<string, any>) => unknown) {
  const list = typeof data === 'object' && data !== null && !Array.isArray(data) ? (pick(data) ?? []) : undefined;
  if (!Array.isArray(list)) throw new Error(`${engine.name} answered JSON without a list of results`);
  return list
    .slice(0, MAX_HITS)
    .filter((r): r is Record<string, unknown> => typeof r === 'object' && r !== null && !Array.isArray(r));
}
const iso = (v: unknown) => {
  const t = typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isFinite(t) ? new Date(t).toISOString() : undefined;
};

/**
 * One HTTP call to a configured engine through the fetch guard. Engines are operator
 * configuration, so private addresses are allowed for them (a SearXNG on the internal network);
 * scheme, size and time limits still apply.
 */
async function call(
  engine: SearchEngineConfig,
  url: URL,
  init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string },
  signal?: AbortSignal,
): Promise<unknown> {
  const res = await guardedRequest(url, {
    allowPrivate: true,
    method: init.method,
    headers: { accept: 'application/json', ...(init.headers ?? {}) },
    body: init.body,
    maxBytes: 2 * 1024 * 1024,
    overflow: 'fail',
    timeoutMs: engine.timeout_ms,
    signal,
  });
  if (res.status >= 400) throw new Error(`${engine.name} answered HTTP ${res.status}`);
  try {
    return JSON.parse(res.body.toString('utf8'));
  } catch {
    throw new Error(`${engine.name} answered something other than JSON`);
  }
}

const SEARXNG_RANGE = { day: 'day', week: 'week', month: 'month', year: 'year' } as const;
const BRAVE_RANGE = { day: 'pd', week: 'pw', month: 'pm', year: 'py' } as const;

/** SearXNG's JSON API: GET /search?q=&format=json&categories=&time_range=. */
async function searxng(engine: SearchEngineConfig, q: EngineQuery): Promise<EngineHit[]> {
  const url = new URL('search', engine.base_url.endsWith('/') ? engine.base_url : `${engine.base_url}/`);
  url.searchParams.set('q', q.query);
  url.searchParams.set('format', 'json');
  url.searchParams.set('categories', SEARXNG_CATEGORY[q.intent]);
  if (q.timeRange) url.searchParams.set('time_range', SEARXNG_RANGE[q.timeRange]);
  const data = await call(
    engine,
    url,
    { headers: engine.api_key ? { authorization: `Bearer ${engine.api_key}` } : {} },
    q.signal,
  );
  return hitsOf(engine, data, (d) => d.results).map((o) => ({
    title: str(o.title),
    url: href(o.url),
    snippet: str(o.content),
    published_at: iso(o.publishedDate),
  }));
}

/** Brave Search API: GET /res/v1/web/search (news intent: /res/v1/news/search), X-Subscription-Token. */
async function brave(engine: SearchEngineConfig, q: EngineQuery): Promise<EngineHit[]> {
  const path = q.intent === 'news' ? 'res/v1/news/search' : 'res/v1/web/search';
  const url = new URL(path, engine.base_url.endsWith('/') ? engine.base_url : `${engine.base_url}/`);
  url.searchParams.set('q', q.query);
  url.searchParams.set('count', String(Math.min(q.count, 20)));
  if (q.timeRange) url.searchParams.set('freshness', BRAVE_RANGE[q.timeRange]);
  const data = await call(engine, url, { headers: { 'x-subscription-token': engine.api_key ?? '' } }, q.signal);
  return hitsOf(engine, data, (d) => d.web?.results ?? d.results).map((o) => ({
    title: str(o.title),
    url: href(o.url),
    snippet: str(o.description),
    published_at: iso(o.page_age),
  }));
}

/** Tavily: POST /search with a Bearer key; topic news for the news intent. */
async function tavily(engine: SearchEngineConfig, q: EngineQuery): Promise<EngineHit[]> {
  const url = new URL('search', engine.base_url.endsWith('/') ? engine.base_url : `${engine.base_url}/`);
  const body = {
    query: q.query,
    max_results: Math.min(q.count, 20),
    topic: q.intent === 'news' ? 'news' : 'general',
    ...(q.timeRange ? { time_range: q.timeRange } : {}),
    ...(q.includeDomains?.length ? { include_domains: q.includeDomains } : {}),
    ...(q.excludeDomains?.length ? { exclude_domains: q.excludeDomains } : {}),
  };
  const data = await call(
    engine,
    url,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${engine.api_key ?? ''}` },
      body: JSON.stringify(body),
    },
    q.signal,
  );
  return hitsOf(engine, data, (d) => d.results).map((o) => ({
    title: str(o.title),
    url: href(o.url),
    snippet: str(o.content),
    published_at: iso(o.published_date),
  }));
}

export function queryEngine(engine: SearchEngineConfig, q: EngineQuery): Promise<EngineHit[]> {
  if (engine.type === 'searxng') return searxng(engine, q);
  if (engine.type === 'brave') return brave(engine, q);
  return tavily(engine, q);
}
