import type { ModelRequest } from '../../activities/providers/types';
import { searchableStores, searchVectorStores, type VectorSearchHit } from '../../activities/vector-stores/search';
import type { PersonaMessage } from '../../schema/chat';
import { AppError } from '../../schema/errors';
import type { CreateResponseRequest, FileSearchTool } from '../../schema/responses';
import type { AppContext } from '../context';
import { lastUserText, withContext } from './chat-search';
import { itemId, searchLead, type AnswerLead, type FileSearchCall } from './responses-items';

/** What a built-in tool runs on: the tenant, the request, its messages (the last user text) and the lane request. */
export interface BuiltinInput {
  tenantId: string;
  body: CreateResponseRequest;
  messages: PersonaMessage[];
  /** The lane's request: the tool's results are put before it. */
  req: ModelRequest;
  signal: AbortSignal;
}

/** Results a file_search tool gives the lane when it does not say (`max_num_results`). */
export const FILE_SEARCH_RESULTS = 10;
/** Characters of the last user message searched for. */
const MAX_QUERY = 4000;

/** A response's file search: its output item, and the files its results came from (in the lane's numbering). */
export interface FileSearch {
  item: FileSearchCall;
  /** Result n's file (n from 1), for the answer's citations. */
  sources: Array<{ file_id: string; filename: string }>;
}

/** OpenAI's `file_citation` annotation: a cited file and where in the text it is cited. */
export interface FileCitation {
  type: 'file_citation';
  file_id: string;
  filename: string;
  index: number;
}

/** The request's file_search tool and where it is (`body.tools.N`), if it has one. */
export function fileSearchToolOf(b: CreateResponseRequest): { tool: FileSearchTool; at: number } | undefined {
  const at = b.tools?.findIndex((t) => t.type === 'file_search') ?? -1;
  return at >= 0 ? { tool: b.tools![at] as FileSearchTool, at } : undefined;
}

/**
 * Runs a response's file_search: the tool's vector stores (each the tenant's and not expired) searched for the last
 * user message, with the tool's filters, ranking and result count; the results are put before the lane (numbered, to
 * be cited by number) and become the response's first output item (`file_search_call`; its results shown when
 * `include` asks for `file_search_call.results`).
 * @throws AppError not_found (a store not the tenant's) or invalid_request (expired; no user text), naming the field
 */
export async function runFileSearch(ctx: AppContext, o: BuiltinInput): Promise<FileSearch | undefined> {
  const found = fileSearchToolOf(o.body);
  if (!found) return undefined;
  const { tool, at } = found;
  await searchableStores(
    ctx.deps.db,
    o.tenantId,
    tool.vector_store_ids,
    (k) => `body.tools.${at}.vector_store_ids.${k}`,
  );
  const query = lastUserText(o.messages).trim().slice(0, MAX_QUERY);
  if (!query)
    throw new AppError('invalid_request', 'file_search: there is no user message with text to search for.', {
      details: [{ path: `body.tools.${at}`, message: 'needs a user message with text' }],
    });
  const hits = await searchVectorStores(ctx.deps, {
    tenantId: o.tenantId,
    storeIds: tool.vector_store_ids,
    queries: [query],
    limit: tool.max_num_results ?? FILE_SEARCH_RESULTS,
    filter: tool.filters ?? undefined,
    ranking: tool.ranking_options ?? undefined,
    signal: o.signal,
  });
  withContext(o.req, resultsBlock(query, hits));
  const shown = o.body.include?.includes('file_search_call.results') ?? false;
  return {
    item: {
      type: 'file_search_call',
      id: itemId('fs'),
      status: 'completed',
      queries: [query],
      results: shown
        ? hits.map((h) => ({
            file_id: h.file_id,
            filename: h.filename,
            score: h.score,
            text: h.text,
            attributes: h.attributes,
          }))
        : null,
    },
    sources: hits.map((h) => ({ file_id: h.file_id, filename: h.filename })),
  };
}

/** The results as the lane reads them: numbered, each with its file's name, to be cited by number. */
function resultsBlock(query: string, hits: VectorSearchHit[]): string {
  const listed = hits.length ? hits.map((h, i) => `[${i + 1}] ${h.filename}\n${h.text}`).join('\n\n') : '(no results)';
  return [
    `File search results for "${query}" (from the user's files). Use them where they help; after a statement that`,
    'uses one, cite it by its number in brackets, like [1]. Do not cite anything else this way.',
    '',
    listed,
  ].join('\n');
}

const MARKER = /\[(\d{1,2})\]/g;

/** The answer's `[n]` citations of search results, as OpenAI's `file_citation` annotations (where each marker is). */
export function fileCitations(text: string, search: FileSearch): FileCitation[] {
  const out: FileCitation[] = [];
  for (const m of text.matchAll(MARKER)) {
    const source = search.sources[Number(m[1]) - 1];
    if (source) out.push({ type: 'file_citation', file_id: source.file_id, filename: source.filename, index: m.index });
  }
  return out;
}

/** A file search as the answer's lead: its item first, its events, and the answer's citations of it. */
export function fileSearchLead(search: FileSearch | undefined): AnswerLead | undefined {
  return search && searchLead(search.item, (text) => fileCitations(text, search));
}
