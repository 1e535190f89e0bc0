import type { CreateResponseRequest, WebSearchTool } from '../../schema/responses';
import type { AppContext } from '../context';
import { citationsIn, searchForChat, withSearchResults, type ChatSearch } from './chat-search';
import { itemId, searchLead, type AnswerLead, type WebSearchCall } from './responses-items';
import type { BuiltinInput } from './responses-file-search';

/** A response's web search: its output item and what the lane was given (for the answer's citations). */
export interface WebSearch {
  item: WebSearchCall;
  found: ChatSearch;
}

/** The request's web search tool and where it is (`body.tools.N`), if it has one. */
function webSearchToolOf(b: CreateResponseRequest): { tool: WebSearchTool; at: number } | undefined {
  const at = b.tools?.findIndex((t) => t.type.startsWith('web_search')) ?? -1;
  return at >= 0 ? { tool: b.tools![at] as WebSearchTool, at } : undefined;
}

/**
 * Runs a response's web search tool as chat's `web_search_options` runs: the configured engines searched for the last
 * user message (within `filters.allowed_domains`; `search_context_size` sets how many results), the results put before
 * the lane, to be cited as markdown links; the response's output starts with a `web_search_call` item (its sources
 * shown when `include` asks for `web_search_call.action.sources`).
 * @throws AppError as searchForChat (no user text 400 naming the tool; no engines 503; every engine failing 502)
 */
export async function runWebSearch(ctx: AppContext, o: BuiltinInput): Promise<WebSearch | undefined> {
  const found = webSearchToolOf(o.body);
  if (!found) return undefined;
  const { tool, at } = found;
  const search = await searchForChat(
    ctx,
    {
      messages: o.messages,
      web_search_options: { search_context_size: tool.search_context_size ?? undefined },
    },
    o.signal,
    { domains: tool.filters?.allowed_domains ?? undefined, path: `body.tools.${at}` },
  );
  withSearchResults(o.req, search);
  const sources = o.body.include?.includes('web_search_call.action.sources') ?? false;
  return {
    item: {
      type: 'web_search_call',
      id: itemId('ws'),
      status: 'completed',
      action: {
        type: 'search',
        query: search.query,
        queries: [search.query],
        ...(sources ? { sources: search.results.map((r) => ({ type: 'url' as const, url: r.url })) } : {}),
      },
    },
    found: search,
  };
}

/** A web search as the answer's lead: its item, its events, and the answer's links to its results as citations. */
export function webSearchLead(search: WebSearch | undefined): AnswerLead | undefined {
  return (
    search &&
    searchLead(search.item, (text) =>
      citationsIn(text, search.found).map((c) => ({ type: 'url_citation' as const, ...c.url_citation })),
    )
  );
}
