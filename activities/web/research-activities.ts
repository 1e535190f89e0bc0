import { Context } from '@temporalio/activity';
import { sql } from 'slonik';
import { z } from 'zod';
import { RESEARCH_DEPTHS, type ResearchSource } from '../../schema/research';
import { streams } from '../../schema/workflow-ids';
import type { ActivityDeps } from '../deps';
import { createModelRouter } from '../providers';
import { appendEvent } from '../store/events';
import { findJobOutput, saveJobOutput } from '../store/job-outputs';
import { getResearch, updateResearch } from '../store/research';
import { verifyCitations, type DraftCitation } from './citations';
import { extractBody } from './fetch-page';
import { guardedRequest } from '../net/guarded-http';
import { searchEngines } from './search-config';
import { normaliseUrl, webSearch } from './web-search';

export interface ResearchRef {
  tenantId: string;
  jobId: string;
}

const stream = streams.research;
const MAX_SOURCE_CHARS = 60_000;

/** The first JSON object in a model answer (models wrap JSON in prose or code fences). */
function jsonIn(text: string): unknown {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  try {
    return JSON.parse(text.slice(start, end + 1));
  } catch {
    return undefined;
  }
}

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

/** Activities of the research workflow (`research-<id>`); each one is idempotent. */
export function createResearchActivities(deps: ActivityDeps) {
  const { db } = deps;
  const models = createModelRouter(deps.config, { log: deps.log });
  const event = (ref: ResearchRef, type: string, data: unknown) =>
    appendEvent(db, { tenantId: ref.tenantId, stream: stream(ref.jobId), type, data });
  const job = async (ref: ResearchRef) => {
    const row = await getResearch(db, ref.tenantId, ref.jobId);
    if (!row) throw new Error(`Research job ${ref.jobId} not found.`);
    return row;
  };

  return {
    /** Sub-questions as search queries, from the model (high-effort lane); the question itself when no model answers. */
    async researchPlan(ref: ResearchRef): Promise<string[]> {
      const row = await job(ref);
      if (row.plan) return row.plan;
      await updateResearch(db, ref.tenantId, ref.jobId, { status: 'running', stage: 'planning' });
      const count = RESEARCH_DEPTHS[row.depth as keyof typeof RESEARCH_DEPTHS]?.queries ?? 3;
      let queries = [row.query];
      if (count > 1) {
        try {
          const res = await models.complete({
            lane: 'svc-oracle',
            messages: [
              {
                role: 'system',
                content: `Plan web research. Break the question into at most ${count} focused web search queries. Answer only JSON: {"queries": ["..."]}`,
              },
              { role: 'user', content: row.query },
            ],
            signal: Context.current().cancellationSignal,
            timeoutMs: 60_000,
          });
          const parsed = z
            .object({ queries: z.array(z.string().min(2).max(300)).min(1) })
            .safeParse(jsonIn(res.content));
          if (parsed.success)
            queries = [row.query, ...parsed.data.queries.filter((q) => q.trim() !== row.query)].slice(0, count);
        } catch (err) {
          deps.log.info(
            { err: (err as Error).message, job: ref.jobId },
            'research planning fell back to the question itself',
          );
        }
      }
      await updateResearch(db, ref.tenantId, ref.jobId, { plan: queries, stage: 'searching' });
      await event(ref, 'plan', { queries });
      return queries;
    },

    /** Searches every planned query and keeps up to max_sources distinct URLs (rank order, round robin). */
    async researchSearch(ref: ResearchRef): Promise<ResearchSource[]> {
      const row = await job(ref);
      if (row.stage !== 'searching' && row.sources.length) return row.sources;
      const engines = searchEngines(deps.config);
      const lists: Array<Array<{ url: string; title: string }>> = [];
      for (const query of row.plan ?? [row.query]) {
        try {
          lists.push((await webSearch(engines, { query, max_results: row.max_sources })).results);
        } catch (err) {
          await event(ref, 'search.failed', { query, error: (err as Error).message });
        }
      }
      const sources: ResearchSource[] = [];
      const seen = new Set<string>();
      for (let rank = 0; sources.length < row.max_sources && lists.some((l) => l.length > rank); rank++) {
        for (const list of lists) {
          const hit = list[rank];
          const key = hit && normaliseUrl(hit.url);
          if (!hit || !key || seen.has(key) || sources.length >= row.max_sources) continue;
          seen.add(key);
          sources.push({ n: sources.length + 1, url: hit.url, title: hit.title, status: 'pending' });
        }
      }
      await updateResearch(db, ref.tenantId, ref.jobId, { sources, stage: 'fetching' });
      await event(ref, 'sources', { sources: sources.map((s) => ({ n: s.n, url: s.url, title: s.title })) });
      return sources;
    },

    /** Fetches one source through the fetch guard (no cache write: research is read-only) and keeps its text in the job's outputs. */
    async researchFetch(
      ref: ResearchRef & { n: number; url: string },
    ): Promise<{ n: number; ok: boolean; error?: string }> {
      const key = `source-${ref.n}`;
      if (await findJobOutput(db, ref.tenantId, ref.jobId, key)) return { n: ref.n, ok: true };
      const started = Date.now();
      try {
        const res = await guardedRequest(ref.url, {
          allowPrivate: deps.config.allowPrivateFetch,
          refuseLocalNames: true,
          maxBytes: 5 * 1024 * 1024,
          timeoutMs: 20_000,
          signal: Context.current().cancellationSignal,
        });
        if (res.status >= 400) throw new Error(`HTTP ${res.status}`);
        const page = await extractBody(res, {});
        if (!page.text.trim()) throw new Error('no text in the page');
        await saveJobOutput(db, {
          tenantId: ref.tenantId,
          jobId: ref.jobId,
          stepKey: key,
          lane: 'web',
          provider: null,
          content: page.text.slice(0, MAX_SOURCE_CHARS),
          usage: null,
          durationMs: Date.now() - started,
        });
        await event(ref, 'source.fetched', { n: ref.n, url: ref.url });
        return { n: ref.n, ok: true };
      } catch (err) {
        if (Context.current().cancellationSignal.aborted) throw err;
        const error = (err as Error).message.slice(0, 300);
        await event(ref, 'source.failed', { n: ref.n, url: ref.url, error });
        return { n: ref.n, ok: false, error };
      }
    },

    /** Writes the report with numbered citations; every citation is verified against the fetched text. */
    async researchReport(
      ref: ResearchRef & { fetched: Array<{ n: number; ok: boolean; error?: string }> },
    ): Promise<void> {
      const row = await job(ref);
      const sources = row.sources.map((s) => {
        const f = ref.fetched.find((x) => x.n === s.n);
        return {
          ...s,
          status: f?.ok ? ('fetched' as const) : ('failed' as const),
          ...(f?.error ? { error: f.error } : {}),
        };
      });
      await updateResearch(db, ref.tenantId, ref.jobId, { sources, stage: 'writing' });
      const texts = new Map<number, { url: string; text: string }>();
      if (sources.some((s) => s.status === 'fetched')) {
        const rows = await db.any(sql.type(z.object({ step_key: z.string(), content: z.string() }))`
          SELECT step_key, content FROM job_outputs WHERE tenant_id = ${ref.tenantId} AND job_id = ${ref.jobId} AND step_key LIKE 'source-%'`);
        for (const r of rows) {
          const n = Number(r.step_key.slice('source-'.length));
          const s = sources.find((x) => x.n === n);
          if (s) texts.set(n, { url: s.url, text: r.content });
        }
      }
      let report;
      if (!texts.size) {
        report = {
          markdown: `No sources could be found or fetched for "${row.query}", so there is nothing to report. Configure a search engine (SVC_CONFIG search.engines) or try another question.`,
          citations: [],
          unverified: [],
        };
      } else {
        const material = [...texts]
          .map(
            ([n, s]) =>
              `[S${n}] ${s.url}\n${passages(s.text, `${row.query} ${(row.plan ?? []).join(' ')}`).join('\n')}`,
          )
          .join('\n\n');
        let draft: { report: string; citations: DraftCitation[] } | undefined;
        const saved = await findJobOutput(db, ref.tenantId, ref.jobId, 'report');
        let content = saved?.content;
        if (!content) {
          try {
            const res = await models.complete({
              lane: 'svc-oracle',
              messages: [
                {
                  role: 'system',
                  content:
                    'Write a concise research report in Markdown answering the question from the sources only. Mark claims with numbered citations like [1]. For each citation give the source number and a quote copied verbatim from that source. Answer only JSON: {"report": "...", "citations": [{"id": 1, "source": 2, "quote": "..."}]}',
                },
                { role: 'user', content: `Question: ${row.query}\n\nSources:\n${material}` },
              ],
              signal: Context.current().cancellationSignal,
              timeoutMs: 120_000,
            });
            content = (
              await saveJobOutput(db, {
                tenantId: ref.tenantId,
                jobId: ref.jobId,
                stepKey: 'report',
                lane: 'svc-oracle',
                provider: res.provider,
                content: res.content,
                usage: res.usage ?? null,
                durationMs: 0,
              })
            ).content;
          } catch (err) {
            deps.log.info(
              { err: (err as Error).message, job: ref.jobId },
              'research report fell back to an extractive summary',
            );
          }
        }
        const parsed = z
          .object({
            report: z.string(),
            citations: z.array(
              z.object({ id: z.number().int(), source: z.number().int().nullable(), quote: z.string() }),
            ),
          })
          .safeParse(content ? jsonIn(content) : undefined);
        if (parsed.success) draft = parsed.data;
        else {
          // No usable model answer: an extractive report, one cited passage per source.
          const lines: string[] = [];
          const citations: DraftCitation[] = [];
          for (const [n, s] of texts) {
            const p = passages(s.text, row.query, 1)[0] ?? s.text.slice(0, 300);
            citations.push({ id: citations.length + 1, source: n, quote: p });
            lines.push(`- ${p} [${citations.length}]`);
          }
          draft = { report: `Key passages for "${row.query}":\n\n${lines.join('\n')}`, citations };
        }
        report = verifyCitations(draft.report, draft.citations, texts);
      }
      await updateResearch(db, ref.tenantId, ref.jobId, { report, stage: 'done' });
    },

    /** Closes the job (completed, failed or cancelled) and ends its event stream. */
    async researchFinish(
      ref: ResearchRef & { status: 'completed' | 'failed' | 'cancelled'; error?: string },
    ): Promise<void> {
      await updateResearch(db, ref.tenantId, ref.jobId, {
        status: ref.status,
        error: ref.error,
        ...(ref.status === 'completed' ? {} : { stage: 'done' }),
      });
      await event(ref, 'done', { status: ref.status, ...(ref.error ? { error: ref.error } : {}) });
    },
  };
}
