import { Context } from '@temporalio/activity';
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { RESEARCH_DEPTHS, type ResearchSource } from '../../schema/research';
import { streams } from '../../schema/workflow-ids';
import type { ActivityDeps } from '../deps';
import { createModelRouter } from '../providers';
import { heartbeating } from '../heartbeat';
import { appendEvent } from '../store/events';
import { findJobOutput, saveJobOutput } from '../store/job-outputs';
import { appendResearchEvent, getResearch, updateResearch } from '../store/research';
import { draftReport, fetchSourceText, finishReport, pickSources, planQueries } from './research-pipeline';
import { searchEngines } from './search-config';
import { webSearch } from './web-search';

export interface ResearchRef {
  tenantId: string;
  jobId: string;
}

const stream = streams.research;

/** Activities of the research workflow (`research-<id>`); each one is idempotent. */
export function createResearchActivities(deps: ActivityDeps) {
  const { db } = deps;
  const models = createModelRouter(deps.config, { log: deps.log });
  /** A progress event; refused once the job has ended, so nothing follows the stream's `done` (a step outliving a cancel). */
  const event = (ref: ResearchRef, type: string, data: unknown, tx: CommonQueryMethods = db) =>
    appendResearchEvent(tx, { tenantId: ref.tenantId, jobId: ref.jobId, type, data });
  /**
   * Throws the activity's CancelledFailure once it was cancelled (heard through the heartbeat): a model call or fetch
   * aborted by the cancel ends the step, not its fallback (the question as the plan, an extractive report, a failed
   * source or query).
   */
  const stopIfCancelled = () => Context.current().cancellationSignal.throwIfAborted();
  const job = async (ref: ResearchRef) => {
    const row = await getResearch(db, ref.tenantId, ref.jobId);
    if (!row) throw new Error(`Research job ${ref.jobId} not found.`);
    return row;
  };

  // The steps, each run heartbeating (every second) by its activity, so that a cancel reaches it within the
  // workflow's heartbeatTimeout and aborts the model call or fetch it waits for.

  async function plan(ref: ResearchRef): Promise<string[]> {
    const row = await job(ref);
    if (row.plan) return row.plan;
    await updateResearch(db, ref.tenantId, ref.jobId, { status: 'running', stage: 'planning' });
    const count = RESEARCH_DEPTHS[row.depth as keyof typeof RESEARCH_DEPTHS]?.queries ?? 3;
    const queries = await planQueries(models, row.query, count, Context.current().cancellationSignal, (err) =>
      deps.log.info({ err: err.message, job: ref.jobId }, 'research planning fell back to the question itself'),
    );
    stopIfCancelled();
    // The write and its event commit together: a retry that finds the plan finds its event too.
    await db.transaction(async (tx) => {
      await updateResearch(tx, ref.tenantId, ref.jobId, { plan: queries, stage: 'searching' });
      await event(ref, 'plan', { queries }, tx);
    });
    return queries;
  }

  async function search(ref: ResearchRef): Promise<ResearchSource[]> {
    const row = await job(ref);
    if (row.stage !== 'searching' && row.sources.length) return row.sources;
    const engines = searchEngines(deps.config);
    const lists: Array<Array<{ url: string; title: string }>> = [];
    for (const query of row.plan ?? [row.query]) {
      try {
        lists.push(
          (await webSearch(engines, { query, max_results: row.max_sources }, Context.current().cancellationSignal))
            .results,
        );
      } catch (err) {
        stopIfCancelled();
        await event(ref, 'search.failed', { query, error: (err as Error).message });
      }
    }
    const sources = pickSources(lists, row.max_sources);
    await db.transaction(async (tx) => {
      await updateResearch(tx, ref.tenantId, ref.jobId, { sources, stage: 'fetching' });
      await event(ref, 'sources', { sources: sources.map((s) => ({ n: s.n, url: s.url, title: s.title })) }, tx);
    });
    return sources;
  }

  async function fetchSource(
    ref: ResearchRef & { n: number; url: string },
  ): Promise<{ n: number; ok: boolean; error?: string }> {
    const key = `source-${ref.n}`;
    if (await findJobOutput(db, ref.tenantId, ref.jobId, key)) return { n: ref.n, ok: true };
    const started = Date.now();
    let text: string;
    try {
      text = await fetchSourceText(deps.config, ref.url, Context.current().cancellationSignal);
    } catch (err) {
      stopIfCancelled();
      const error = (err as Error).message.slice(0, 300);
      await event(ref, 'source.failed', { n: ref.n, url: ref.url, error });
      return { n: ref.n, ok: false, error };
    }
    // The source's text and its event commit together; a database failure is retried, not a failed source.
    await db.transaction(async (tx) => {
      const saved = await saveJobOutput(tx, {
        tenantId: ref.tenantId,
        jobId: ref.jobId,
        stepKey: key,
        lane: 'web',
        provider: null,
        content: text,
        usage: null,
        durationMs: Date.now() - started,
      });
      if (saved.fresh) await event(ref, 'source.fetched', { n: ref.n, url: ref.url }, tx);
    });
    return { n: ref.n, ok: true };
  }

  async function report(
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
    let content: string | undefined;
    if (texts.size) {
      // The model's answer is stored before it is verified, so a retried activity verifies the same draft.
      content = (await findJobOutput(db, ref.tenantId, ref.jobId, 'report'))?.content;
      if (!content) {
        try {
          const res = await draftReport(models, row.query, row.plan ?? [], texts, Context.current().cancellationSignal);
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
          stopIfCancelled();
          deps.log.info(
            { err: (err as Error).message, job: ref.jobId },
            'research report fell back to an extractive summary',
          );
        }
      }
    }
    await updateResearch(db, ref.tenantId, ref.jobId, {
      report: finishReport(row.query, content, texts),
      stage: 'done',
    });
  }

  return {
    /** Sub-questions as search queries, from the model (high-effort lane); the question itself when no model answers. */
    async researchPlan(ref: ResearchRef): Promise<string[]> {
      return heartbeating(() => plan(ref));
    },

    /** Searches every planned query and keeps up to max_sources distinct URLs (rank order, round robin). */
    async researchSearch(ref: ResearchRef): Promise<ResearchSource[]> {
      return heartbeating(() => search(ref));
    },

    /** Fetches one source through the fetch guard (no cache write: research is read-only) and keeps its text in the job's outputs. */
    async researchFetch(
      ref: ResearchRef & { n: number; url: string },
    ): Promise<{ n: number; ok: boolean; error?: string }> {
      return heartbeating(() => fetchSource(ref));
    },

    /** Writes the report with numbered citations; every citation is verified against the fetched text. */
    async researchReport(
      ref: ResearchRef & { fetched: Array<{ n: number; ok: boolean; error?: string }> },
    ): Promise<void> {
      return heartbeating(() => report(ref));
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
      // Unguarded: the job has ended by now, and this is the stream's last event.
      await appendEvent(db, {
        tenantId: ref.tenantId,
        stream: stream(ref.jobId),
        type: 'done',
        data: { status: ref.status, ...(ref.error ? { error: ref.error } : {}) },
      });
    },
  };
}
