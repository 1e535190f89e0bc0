import { AppError } from '../../schema/errors';
import type { EngineStatus, SearchResult, WebSearchBody, WebSearchResponse } from '../../schema/web';
import { fuseRankings } from '../knowledge/fusion';
import { FetchFailure } from '../net/guarded-http';
import type { SearchEngineConfig } from './search-config';
import { queryEngine, type EngineHit } from './search-engines';
import { classifyIntent } from './search-intent';

const TRACKING = /^(utm_\w+|fbclid|gclid|dclid|msclkid|mc_cid|mc_eid|ref|ref_src|igshid|_ga|yclid)$/i;

/**
 * The dedupe key of a result URL: scheme-less, lower-case host without `www.`, no fragment, no
 * tracking parameters, sorted query, no trailing slash. null for URLs that do not parse.
 */
export function normaliseUrl(raw: string): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  const params = [...u.searchParams.entries()]
    .filter(([k]) => !TRACKING.test(k))
    .sort(([a], [b]) => a.localeCompare(b));
  const query = params.length ? `?${new URLSearchParams(params).toString()}` : '';
  const host = u.hostname.toLowerCase().replace(/^www\./, '');
  const port = u.port && u.port !== '80' && u.port !== '443' ? `:${u.port}` : '';
  const path = u.pathname.replace(/\/+$/, '') || '';
  return `${host}${port}${path}${query}`;
}

function hostMatches(url: string, domains: string[]): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  return domains.some((d) => host === d.toLowerCase() || host.endsWith(`.${d.toLowerCase()}`));
}

/**
 * Queries the engines serving the intent in parallel, each within its own time limit, and merges
 * their lists by normalised URL with reciprocal rank fusion. A failing or hanging engine shows in
 * `engines` with its status and makes the answer `partial`.
 * @throws AppError service_unavailable when no engine is configured; upstream_error when all fail
 */
export async function webSearch(
  engines: SearchEngineConfig[],
  body: WebSearchBody,
  signal?: AbortSignal,
): Promise<WebSearchResponse> {
  if (!engines.length) {
    throw new AppError(
      'service_unavailable',
      'No search engine is configured: add a search.engines list (type searxng, brave or tavily, with base_url and api_key) to the SVC_CONFIG file.',
    );
  }
  const intent = body.intent ?? classifyIntent(body.query);
  const chosen = engines.filter((e) => !e.intents || e.intents.includes(intent));
  const active = chosen.length ? chosen : engines;
  const statuses: EngineStatus[] = engines
    .filter((e) => !active.includes(e))
    .map((e) => ({ name: e.name, status: 'skipped', latency_ms: 0 }));
  const lists = await Promise.all(
    active.map(async (engine) => {
      const started = Date.now();
      try {
        const hits = await queryEngine(engine, {
          query: body.query,
          intent,
          count: body.max_results,
          timeRange: body.time_range,
          includeDomains: body.include_domains,
          excludeDomains: body.exclude_domains,
          signal,
        });
        statuses.push({ name: engine.name, status: 'ok', latency_ms: Date.now() - started, results: hits.length });
        return { engine: engine.name, hits };
      } catch (err) {
        const timeout = err instanceof FetchFailure && err.kind === 'timeout';
        statuses.push({
          name: engine.name,
          status: timeout ? 'timeout' : 'error',
          latency_ms: Date.now() - started,
          error: (err as Error).message.slice(0, 300),
        });
        return { engine: engine.name, hits: [] as EngineHit[] };
      }
    }),
  );
  if (!statuses.some((s) => s.status === 'ok')) {
    throw new AppError(
      'upstream_error',
      `Every search engine failed: ${statuses.map((s) => `${s.name} ${s.status}${s.error ? ` (${s.error})` : ''}`).join('; ')}.`,
    );
  }
  const merged = new Map<string, { hit: EngineHit; engines: string[] }>();
  const ranked = lists.map(({ engine, hits }) => {
    const ids: Array<{ id: string }> = [];
    const seen = new Set<string>();
    for (const hit of hits) {
      const id = normaliseUrl(hit.url);
      if (!id || seen.has(id)) continue;
      seen.add(id);
      if (body.include_domains?.length && !hostMatches(hit.url, body.include_domains)) continue;
      if (body.exclude_domains?.length && hostMatches(hit.url, body.exclude_domains)) continue;
      ids.push({ id });
      const cur = merged.get(id);
      if (!cur) merged.set(id, { hit: { ...hit }, engines: [engine] });
      else {
        cur.engines.push(engine);
        if (hit.snippet.length > cur.hit.snippet.length) cur.hit.snippet = hit.snippet;
        cur.hit.title ||= hit.title;
        cur.hit.published_at ??= hit.published_at;
      }
    }
    return ids;
  });
  const results: SearchResult[] = fuseRankings(ranked)
    .slice(0, body.max_results)
    .map(({ id, score }) => {
      const m = merged.get(id)!;
      return {
        title: m.hit.title,
        url: m.hit.url,
        snippet: m.hit.snippet,
        engines: m.engines,
        score: Math.round(score * 1e6) / 1e6,
        ...(m.hit.published_at ? { published_at: m.hit.published_at } : {}),
      };
    });
  const order = new Map(engines.map((e, i) => [e.name, i]));
  statuses.sort((a, b) => (order.get(a.name) ?? 0) - (order.get(b.name) ?? 0));
  return {
    query: body.query,
    intent,
    results,
    engines: statuses,
    partial: statuses.some((s) => s.status === 'error' || s.status === 'timeout'),
  };
}
