import { isBuiltin } from '../../schema/responses';
import type { AppContext } from '../context';
import { fileSearchLead, runFileSearch, type BuiltinInput, type FileSearch } from './responses-file-search';
import type { AnswerLead } from './responses-items';
import { runWebSearch, webSearchLead, type WebSearch } from './responses-web-search';

/**
 * What this service's own tools (file_search, web_search) found before the lane answered: kept with a background
 * response's job, so its worker's answer starts with them.
 */
export interface BuiltinResults {
  file?: FileSearch;
  web?: WebSearch;
}

/**
 * Runs the request's built-in tools, each at most once, before the lane: file search, then web search; their results
 * go before the lane (after the persona's system message). @throws AppError as runFileSearch and runWebSearch
 */
export async function runBuiltins(ctx: AppContext, o: BuiltinInput): Promise<BuiltinResults | undefined> {
  if (!o.body.tools?.some(isBuiltin)) return undefined;
  const file = await runFileSearch(ctx, o);
  const web = await runWebSearch(ctx, o);
  return { ...(file ? { file } : {}), ...(web ? { web } : {}) };
}

/** The answer's lead of the built-ins' results: their items in the order they ran, and every citation of them. */
export function builtinLead(b: BuiltinResults | undefined): AnswerLead | undefined {
  const leads = [fileSearchLead(b?.file), webSearchLead(b?.web)].filter((l): l is AnswerLead => l !== undefined);
  if (!leads.length) return undefined;
  return {
    items: leads.flatMap((l) => l.items),
    emit(emit, first) {
      let at = first;
      for (const l of leads) {
        l.emit(emit, at);
        at += l.items.length;
      }
    },
    annotate: (text) =>
      leads
        .flatMap((l) => l.annotate(text) as Array<{ index?: number; start_index?: number }>)
        .sort((a, b) => (a.index ?? a.start_index ?? 0) - (b.index ?? b.start_index ?? 0)),
  };
}
