import { z } from 'zod';
import type { Config } from '../../schema/config';
import type { ResearchReport, ResearchSource } from '../../schema/research';
import { guardedRequest } from '../net/guarded-http';
import type { ModelRouter } from '../providers/types';
import { verifyCitations, type DraftCitation } from './citations';
import { extractBody } from './fetch-page';
import { normaliseUrl } from './web-search';
import { jsonIn } from '../providers/json-answer';

// The research steps as plain functions: the research workflow's activities (research-activities.ts)
// and the task `research` action (tasks/actions.ts) run the same plan → search → fetch → report code.

export const MAX_SOURCE_CHARS = 60_000;

const words = (s: string) => new Set(s.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? []);

/** The paragraphs of a source that share the most words with the question (at most `n`). */
export function passages(text: string, question: string, n = 3): string[] {
  const q = words(question);
  return text
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter((p) => p.length >= 40)
    .map((p, i) => ({ p: p.slice(0, 700), i, score: [...words(p)].filter((w) => q.has(w)).length }))
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, n)
    .sort((a, b) => a.i - b.i)
    .map((x) => x.p);
}

/**
 * Up to `count` search queries: the question first, then the model's sub-questions (high-effort
 * lane). Without a usable model answer, the question alone.
 */
export async function planQueries(
  models: ModelRouter,
  query: string,
  count: number,
  signal: AbortSignal,
  onFallback?: (err: Error) => void,
): Promise<string[]> {
  if (count <= 1) return [query];
  try {
    const res = await models.complete({
      lane: 'svc-oracle',
      messages: [
        {
          role: 'system',
          content: `Plan web research. Break the question into at most ${count} focused web search queries. Answer only JSON: {"queries": ["..."]}`,
        },
        { role: 'user', content: query },
      ],
      signal,
      timeoutMs: 60_000,
    });
    const parsed = z.object({ queries: z.array(z.string().min(2).max(300)).min(1) }).safeParse(jsonIn(res.content));
    if (parsed.success) return [query, ...parsed.data.queries.filter((q) => q.trim() !== query)].slice(0, count);
  } catch (err) {
    onFallback?.(err as Error);
  }
  return [query];
}

/** Up to `max` distinct URLs from several ranked result lists, round robin by rank. */
export function pickSources(lists: Array<Array<{ url: string; title: string }>>, max: number): ResearchSource[] {
  const sources: ResearchSource[] = [];
  const seen = new Set<string>();
  for (let rank = 0; sources.length < max && lists.some((l) => l.length > rank); rank++) {
    for (const list of lists) {
      const hit = list[rank];
      const key = hit && normaliseUrl(hit.url);
      if (!hit || !key || seen.has(key) || sources.length >= max) continue;
      seen.add(key);
      sources.push({ n: sources.length + 1, url: hit.url, title: hit.title, status: 'pending' });
    }
  }
  return sources;
}

/** One source's readable text, through the fetch guard and web-fetch's extraction (no cache write: research is read-only). */
export async function fetchSourceText(config: Config, url: string, signal: AbortSignal): Promise<string> {
  const res = await guardedRequest(url, {
    allowPrivate: config.allowPrivateFetch,
    refuseLocalNames: true,
    maxBytes: 5 * 1024 * 1024,
    timeoutMs: 20_000,
    signal,
  });
  if (res.status >= 400) throw new Error(`HTTP ${res.status}`);
  const page = await extractBody(res, {});
  if (!page.text.trim()) throw new Error('no text in the page');
  return page.text.slice(0, MAX_SOURCE_CHARS);
}

/** The prompt material: the best passages of each fetched source, numbered [S<n>]. */
function material(query: string, plan: string[], texts: Map<number, { url: string; text: string }>): string {
  return [...texts]
    .map(([n, s]) => `[S${n}] ${s.url}\n${passages(s.text, `${query} ${plan.join(' ')}`).join('\n')}`)
    .join('\n\n');
}

/** Asks the model for a cited report (JSON); the raw answer, to be stored before it is verified. */
export async function draftReport(
  models: ModelRouter,
  query: string,
  plan: string[],
  texts: Map<number, { url: string; text: string }>,
  signal: AbortSignal,
): Promise<{ content: string; provider: string; usage?: unknown }> {
  const res = await models.complete({
    lane: 'svc-oracle',
    messages: [
      {
        role: 'system',
        content:
          'Write a concise research report in Markdown answering the question from the sources only. Mark claims with numbered citations like [1]. For each citation give the source number and a quote copied verbatim from that source. Answer only JSON: {"report": "...", "citations": [{"id": 1, "source": 2, "quote": "..."}]}',
      },
      { role: 'user', content: `Question: ${query}\n\nSources:\n${material(query, plan, texts)}` },
    ],
    signal,
    timeoutMs: 120_000,
  });
  return { content: res.content, provider: res.provider, usage: res.usage };
}

/**
 * The final report: the model's draft (or, without a usable one, one extractive passage per
 * source) with every citation verified against the fetched texts; zero sources → a report saying so.
 */
export function finishReport(
  query: string,
  content: string | undefined,
  texts: Map<number, { url: string; text: string }>,
): ResearchReport {
  if (!texts.size) {
    return {
      markdown: `No sources could be found or fetched for "${query}", so there is nothing to report. Configure a search engine (SVC_CONFIG search.engines) or try another question.`,
      citations: [],
      unverified: [],
    };
  }
  const parsed = z
    .object({
      report: z.string(),
      citations: z.array(z.object({ id: z.number().int(), source: z.number().int().nullable(), quote: z.string() })),
    })
    .safeParse(content ? jsonIn(content) : undefined);
  let draft: { report: string; citations: DraftCitation[] };
  if (parsed.success) draft = parsed.data;
  else {
    const lines: string[] = [];
    const citations: DraftCitation[] = [];
    for (const [n, s] of texts) {
      const p = passages(s.text, query, 1)[0] ?? s.text.slice(0, 300);
      citations.push({ id: citations.length + 1, source: n, quote: p });
      lines.push(`- ${p} [${citations.length}]`);
    }
    draft = { report: `Key passages for "${query}":\n\n${lines.join('\n')}`, citations };
  }
  return verifyCitations(draft.report, draft.citations, texts);
}
