import { contentText } from '../../activities/providers/openai-client';
import type { ChatMessageIn, ModelRequest } from '../../activities/providers/types';
import { searchEngines } from '../../activities/web/search-config';
import { normaliseUrl, webSearch } from '../../activities/web/web-search';
import type { ChatCompletionRequest } from '../../schema/chat';
import { AppError } from '../../schema/errors';
import type { AppContext } from '../context';

/** Results given to the lane for each `search_context_size`. */
const RESULTS = { low: 3, medium: 5, high: 10 } as const;
/** Characters of the last user message searched for (the search route's limit). */
const MAX_QUERY = 1000;
/** Characters of one result's snippet put before the lane. */
const MAX_SNIPPET = 600;

/** What a chat's web search found: the query and the results the lane gets. */
export interface ChatSearch {
  query: string;
  results: Array<{ title: string; url: string; snippet: string }>;
}

/** OpenAI's `url_citation` annotation. */
export interface UrlCitation {
  type: 'url_citation';
  url_citation: { start_index: number; end_index: number; url: string; title: string };
}

/** The text of the request's last user message (its text parts, as a session keeps it). */
export function lastUserText(messages: ChatCompletionRequest['messages']): string {
  const m = messages.findLast((x) => x.role === 'user');
  return m ? contentText(m.content as ChatMessageIn['content']) : '';
}

/**
 * Searches the configured engines for the request's last user message (`web_search_options`).
 * @throws AppError invalid_request without a user message to search for; service_unavailable without engines;
 * upstream_error when every engine fails
 */
export async function searchForChat(
  ctx: AppContext,
  body: Pick<ChatCompletionRequest, 'messages' | 'web_search_options'>,
  signal: AbortSignal,
  o: { domains?: string[]; path?: string } = {},
): Promise<ChatSearch> {
  const query = lastUserText(body.messages).trim().slice(0, MAX_QUERY);
  if (!query)
    throw new AppError('invalid_request', 'web search: there is no user message with text to search for.', {
      details: [{ path: o.path ?? 'body.web_search_options', message: 'needs a user message with text' }],
    });
  const size = body.web_search_options?.search_context_size ?? 'medium';
  const found = await webSearch(
    searchEngines(ctx.deps.config),
    { query, max_results: RESULTS[size], ...(o.domains?.length ? { include_domains: o.domains } : {}) },
    signal,
  );
  return {
    query,
    results: found.results.map((r) => ({ title: r.title, url: r.url, snippet: r.snippet.slice(0, MAX_SNIPPET) })),
  };
}

/** The results put before the lane, after the system message it already has (or as the first one). */
export function withSearchResults(req: ModelRequest, s: ChatSearch): void {
  const listed = s.results.length
    ? s.results.map((r, i) => `[${i + 1}] ${r.title}\n${r.url}\n${r.snippet}`).join('\n\n')
    : '(no results)';
  withContext(
    req,
    [
      `Web search results for "${s.query}" (searched just now). Use them where they help; cite each one you use`,
      'inline as a markdown link to its URL, like [title](https://example.com/page). Do not cite anything else.',
      '',
      listed,
    ].join('\n'),
  );
}

/** A block of context (search results) put before the lane, after the system message it already has (or first). */
export function withContext(req: ModelRequest, block: string): void {
  const first = req.messages[0];
  if (first?.role === 'system' && typeof first.content === 'string')
    req.messages = [{ ...first, content: `${first.content}\n\n${block}` }, ...req.messages.slice(1)];
  else req.messages = [{ role: 'system', content: block }, ...req.messages];
}

const LINK = /\[([^\]\n]{1,300})\]\((https?:\/\/[^\s)]{1,2000})\)/g;

/** The answer's markdown links to search results, as OpenAI's `url_citation` annotations (where each link is). */
export function citationsIn(content: string, s: ChatSearch): UrlCitation[] {
  const byUrl = new Map<string, { title: string; url: string }>();
  for (const r of s.results) byUrl.set(normaliseUrl(r.url) ?? r.url, r);
  const out: UrlCitation[] = [];
  for (const m of content.matchAll(LINK)) {
    const result = byUrl.get(normaliseUrl(m[2]) ?? m[2]);
    if (!result) continue;
    out.push({
      type: 'url_citation',
      url_citation: { start_index: m.index, end_index: m.index + m[0].length, url: result.url, title: result.title },
    });
  }
  return out;
}
