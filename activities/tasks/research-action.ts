import { RESEARCH_DEPTHS, type ResearchReport } from '../../schema/research';
import { draftReport, fetchSourceText, finishReport, pickSources, planQueries } from '../web/research-pipeline';
import { searchEngines } from '../web/search-config';
import { webSearch } from '../web/web-search';
import type { ActionInput } from './actions';
import { StepPermanentError } from './errors';

// The task `research` step runs the research capability's pipeline (plan → search → fetch →
// report with verified citations) as a library inside the step's activity, not as a child
// workflow: the pipeline is read-only, so a retried step repeats only reads and model calls, and
// the step's own bookkeeping (tasks/index.ts runStep) stores the result once per run and step.
// Bounded so it fits the step activity's time limit: depth `quick` unless args.depth says otherwise.

const MAX_PARALLEL_FETCHES = 4;

export const NO_SEARCH_NOTE =
  'Note: no search provider is configured (SVC_CONFIG search.engines), so this research is the model’s own knowledge, without fetched or verified sources.';

/** The report as the step's result: Markdown, then the verified sources and what could not be verified. */
export function formatReport(
  report: ResearchReport,
  sources: Array<{ n: number; url: string; error?: string }>,
): string {
  const parts = [report.markdown];
  if (report.citations.length)
    parts.push(
      '## Citations (verified)\n\n' +
        report.citations.map((c) => `[${c.id}] ${c.url} — “${c.quote.replace(/\s+/g, ' ')}”`).join('\n'),
    );
  if (report.unverified.length)
    parts.push(
      '## Unverified (citation removed)\n\n' + report.unverified.map((u) => `- “${u.quote}”: ${u.reason}`).join('\n'),
    );
  const failed = sources.filter((s) => s.error);
  if (failed.length) parts.push('## Sources not fetched\n\n' + failed.map((s) => `- ${s.url}: ${s.error}`).join('\n'));
  return parts.join('\n\n');
}

async function mapBounded<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

/**
 * Runs the research pipeline for args.topic (or prompt/query); `modelOnly(note)` is today's
 * model-only answer, used with a note when no search provider is configured.
 */
export async function researchAction(
  input: ActionInput,
  modelOnly: (note: string) => Promise<string>,
): Promise<string> {
  const { args, signal } = input;
  const query = (args.topic ?? args.prompt ?? args.query ?? '').trim().slice(0, 2000);
  const engines = searchEngines(input.deps.config);
  if (!engines.length || !query) {
    if (!query && !input.step.depends_on.some((id) => input.depResults[id]))
      throw new StepPermanentError('The research step needs args.topic or a dependency with a result.');
    return modelOnly(engines.length ? 'Note: no topic given, so no web search was made.' : NO_SEARCH_NOTE);
  }
  const depth = args.depth && args.depth in RESEARCH_DEPTHS ? (args.depth as keyof typeof RESEARCH_DEPTHS) : 'quick';
  const maxSources = Math.min(
    Math.max(Number.parseInt(args.max_sources ?? '', 10) || RESEARCH_DEPTHS[depth].sources, 1),
    10,
  );
  const plan = await planQueries(input.models, query, RESEARCH_DEPTHS[depth].queries, signal);
  const lists = [];
  for (const q of plan) {
    try {
      lists.push((await webSearch(engines, { query: q, max_results: maxSources }, signal)).results);
    } catch (err) {
      if (signal.aborted) throw err;
    }
  }
  const sources = pickSources(lists, maxSources);
  type Fetched = (typeof sources)[number] & { text?: string; error?: string };
  const fetched = await mapBounded(sources, MAX_PARALLEL_FETCHES, async (s): Promise<Fetched> => {
    try {
      return { ...s, text: await fetchSourceText(input.deps.config, s.url, signal) };
    } catch (err) {
      if (signal.aborted) throw err;
      return { ...s, error: (err as Error).message.slice(0, 300) };
    }
  });
  const texts = new Map<number, { url: string; text: string }>();
  for (const s of fetched) if (s.text !== undefined) texts.set(s.n, { url: s.url, text: s.text });
  let content: string | undefined;
  if (texts.size) {
    try {
      content = (await draftReport(input.models, query, plan, texts, signal)).content;
    } catch (err) {
      if (signal.aborted) throw err;
      // No model answer: finishReport writes an extractive report from the sources.
    }
  }
  return formatReport(finishReport(query, content, texts), fetched);
}
