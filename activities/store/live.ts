import { sql } from 'slonik';
import { z } from 'zod';
import type { DailyAggregate, EriState } from '../live/formulas';
import type { Substrate } from '../live/substrate';
import type { Db } from './db';

/*
 * Live-plane aggregates. These queries deliberately span all tenants: they produce anonymous,
 * service-wide counts and a mood score for the public /eri, /aeci and WebSocket frames. No row
 * content or tenant id leaves this module.
 */

const Texts = z.object({ t: z.string() });
const Counts = z.object({ requests: z.number(), jobs_done: z.number(), errors: z.number() });

/** Texts whose sentiment counts (user chat messages, feedback roast/lesson) in [from, to), newest first. */
export async function windowTexts(db: Db, from: Date, to: Date, limit: number): Promise<string[]> {
  const f = from.toISOString();
  const t = to.toISOString();
  const rows = await db.anyFirst(sql.type(Texts)`
    SELECT t FROM (
      SELECT content AS t, created_at FROM chat_messages WHERE role = 'user' AND created_at >= ${f} AND created_at < ${t}
      UNION ALL
      SELECT concat_ws(' ', roast, lesson) AS t, created_at FROM chat_feedback
       WHERE (roast IS NOT NULL OR lesson IS NOT NULL) AND created_at >= ${f} AND created_at < ${t}
    ) x ORDER BY created_at DESC LIMIT ${limit}`);
  return [...rows];
}

/** Work started (requests), jobs finished and failed in [from, to). */
export async function windowCounts(
  db: Db,
  from: Date,
  to: Date,
): Promise<{ requests: number; jobsDone: number; errors: number }> {
  const f = from.toISOString();
  const t = to.toISOString();
  const r = await db.one(sql.type(Counts)`
    SELECT
      (SELECT count(*)::int FROM chat_messages WHERE role = 'user' AND created_at >= ${f} AND created_at < ${t})
      + (SELECT count(*)::int FROM tasks WHERE created_at >= ${f} AND created_at < ${t})
      + (SELECT count(*)::int FROM goals WHERE created_at >= ${f} AND created_at < ${t})
      + (SELECT count(*)::int FROM learn_jobs WHERE created_at >= ${f} AND created_at < ${t})
      + (SELECT count(*)::int FROM swarm_runs WHERE created_at >= ${f} AND created_at < ${t}) AS requests,
      (SELECT count(*)::int FROM tasks WHERE status IN ('completed', 'failed') AND updated_at >= ${f} AND updated_at < ${t})
      + (SELECT count(*)::int FROM goals WHERE status IN ('completed', 'failed') AND updated_at >= ${f} AND updated_at < ${t})
      + (SELECT count(*)::int FROM learn_jobs WHERE status IN ('completed', 'failed') AND finished_at >= ${f} AND finished_at < ${t})
      + (SELECT count(*)::int FROM swarm_runs WHERE status IN ('completed', 'failed') AND updated_at >= ${f} AND updated_at < ${t}) AS jobs_done,
      (SELECT count(*)::int FROM tasks WHERE status = 'failed' AND updated_at >= ${f} AND updated_at < ${t})
      + (SELECT count(*)::int FROM goals WHERE status = 'failed' AND updated_at >= ${f} AND updated_at < ${t})
      + (SELECT count(*)::int FROM learn_jobs WHERE status = 'failed' AND finished_at >= ${f} AND finished_at < ${t})
      + (SELECT count(*)::int FROM swarm_runs WHERE status = 'failed' AND updated_at >= ${f} AND updated_at < ${t}) AS errors`);
  return { requests: Number(r.requests), jobsDone: Number(r.jobs_done), errors: Number(r.errors) };
}

const Families = z.object({
  chat: z.number(),
  tasks: z.number(),
  goals: z.number(),
  learning: z.number(),
  swarm: z.number(),
});

/** Work started per capability family in [from, to) (for the curiosity frame: where attention goes). */
export async function windowFamilies(db: Db, from: Date, to: Date): Promise<z.infer<typeof Families>> {
  const f = from.toISOString();
  const t = to.toISOString();
  return db.one(sql.type(Families)`
    SELECT (SELECT count(*)::int FROM chat_messages WHERE role = 'user' AND created_at >= ${f} AND created_at < ${t}) AS chat,
           (SELECT count(*)::int FROM tasks WHERE created_at >= ${f} AND created_at < ${t}) AS tasks,
           (SELECT count(*)::int FROM goals WHERE created_at >= ${f} AND created_at < ${t}) AS goals,
           (SELECT count(*)::int FROM learn_jobs WHERE created_at >= ${f} AND created_at < ${t}) AS learning,
           (SELECT count(*)::int FROM swarm_runs WHERE created_at >= ${f} AND created_at < ${t}) AS swarm`);
}

/** Database load: connections in use against the server's limit. */
export async function databaseLoad(db: Db): Promise<number> {
  return db.oneFirst(sql.type(z.object({ load: z.number() }))`
    SELECT (SELECT count(*) FROM pg_stat_activity)::float8 / greatest(1, current_setting('max_connections')::int) AS load`);
}

const EriValue = z.object({ eri: z.number() });

/** ERI values of samples in [from, to), newest first. */
export async function eriValues(db: Db, from: Date, to: Date, limit: number): Promise<number[]> {
  const rows = await db.anyFirst(sql.type(EriValue)`
    SELECT eri FROM live_samples WHERE sampled_at >= ${from.toISOString()} AND sampled_at < ${to.toISOString()}
    ORDER BY sampled_at DESC LIMIT ${limit}`);
  return [...rows];
}

const SampleRow = z.object({ id: z.number(), sampled_at: z.string(), state: z.record(z.string(), z.unknown()) });
/** A stored sample; `health`/`curiosity` are absent on rows written before they existed. */
export type LiveSample = { id: number; sampledAt: string; state: EriState & Partial<Substrate> };

/** Stores the sample of one minute (a retry of the same minute overwrites it). */
export async function saveSample(db: Db, sampledAt: Date, state: EriState & Partial<Substrate>): Promise<LiveSample> {
  const r = await db.one(sql.type(SampleRow)`
    INSERT INTO live_samples (sampled_at, eri, state) VALUES (${sampledAt.toISOString()}, ${state.eri}, ${sql.jsonb(state as never)})
    ON CONFLICT (sampled_at) DO UPDATE SET eri = EXCLUDED.eri, state = EXCLUDED.state
    RETURNING id::int AS id, to_json(sampled_at)#>>'{}' AS sampled_at, state`);
  return { id: r.id, sampledAt: r.sampled_at, state: r.state as unknown as LiveSample['state'] };
}

export async function latestSample(db: Db): Promise<LiveSample | null> {
  const r = await db.maybeOne(sql.type(SampleRow)`
    SELECT id::int AS id, to_json(sampled_at)#>>'{}' AS sampled_at, state FROM live_samples ORDER BY sampled_at DESC LIMIT 1`);
  return r ? { id: r.id, sampledAt: r.sampled_at, state: r.state as unknown as LiveSample['state'] } : null;
}

export async function sampleById(db: Db, id: number): Promise<LiveSample | null> {
  const r = await db.maybeOne(sql.type(SampleRow)`
    SELECT id::int AS id, to_json(sampled_at)#>>'{}' AS sampled_at, state FROM live_samples WHERE id = ${id}`);
  return r ? { id: r.id, sampledAt: r.sampled_at, state: r.state as unknown as LiveSample['state'] } : null;
}

/** Replaces the aggregate of one UTC day (recomputed from the source tables, so repeating it is harmless). */
export async function saveDaily(db: Db, d: DailyAggregate): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO live_daily (day, sentiment_sum, sentiment_n, requests, jobs_done, errors, eri_sum, eri_n, updated_at)
    VALUES (${d.day}, ${d.sentimentSum}, ${d.sentimentN}, ${d.requests}, ${d.jobsDone}, ${d.errors}, ${d.eriSum}, ${d.eriN}, now())
    ON CONFLICT (day) DO UPDATE SET sentiment_sum = EXCLUDED.sentiment_sum, sentiment_n = EXCLUDED.sentiment_n,
      requests = EXCLUDED.requests, jobs_done = EXCLUDED.jobs_done, errors = EXCLUDED.errors,
      eri_sum = EXCLUDED.eri_sum, eri_n = EXCLUDED.eri_n, updated_at = now()`);
}

const DailyRow = z.object({
  day: z.string(),
  sentiment_sum: z.number(),
  sentiment_n: z.number(),
  requests: z.number(),
  jobs_done: z.number(),
  errors: z.number(),
  eri_sum: z.number(),
  eri_n: z.number(),
});

/** Daily aggregates with day in [from, to] (YYYY-MM-DD, inclusive). */
export async function dailyRange(db: Db, from: string, to: string): Promise<DailyAggregate[]> {
  const rows = await db.any(sql.type(DailyRow)`
    SELECT day::text AS day, sentiment_sum, sentiment_n, requests, jobs_done, errors, eri_sum, eri_n
    FROM live_daily WHERE day >= ${from}::date AND day <= ${to}::date ORDER BY day`);
  return rows.map((r) => ({
    day: r.day,
    sentimentSum: r.sentiment_sum,
    sentimentN: r.sentiment_n,
    requests: r.requests,
    jobsDone: r.jobs_done,
    errors: r.errors,
    eriSum: r.eri_sum,
    eriN: r.eri_n,
  }));
}

/** Sum and count of the day's stored ERI samples. */
export async function dayEri(db: Db, dayStart: Date, dayEnd: Date): Promise<{ sum: number; n: number }> {
  const r = await db.one(sql.type(z.object({ sum: z.number(), n: z.number() }))`
    SELECT coalesce(sum(eri), 0)::float8 AS sum, count(*)::int AS n FROM live_samples
    WHERE sampled_at >= ${dayStart.toISOString()} AND sampled_at < ${dayEnd.toISOString()}`);
  return r;
}

/** The channel of the live plane: every replica's WebSocket hub LISTENs on it. */
export const LIVE_CHANNEL = 'svc_live';

export type LiveNotice = { kind: string; id?: number | string; tenant?: string; [k: string]: unknown };

/** NOTIFYs every replica's WebSocket hub (e.g. that a sample exists: its id only). */
export async function notifyLive(db: Db, payload: LiveNotice): Promise<void> {
  await notifyLiveMany(db, [payload]);
}

/**
 * Several notices in one round trip, delivered in this order (one statement, one transaction).
 * PostgreSQL folds identical payloads of one transaction into one: callers number theirs.
 */
export async function notifyLiveMany(db: Db, payloads: LiveNotice[]): Promise<void> {
  if (payloads.length === 0) return;
  const texts = payloads.map((p) => JSON.stringify(p));
  await db.query(sql.unsafe`
    SELECT pg_notify(${LIVE_CHANNEL}, p) FROM unnest(${sql.array(texts, 'text')}::text[]) WITH ORDINALITY AS t(p, n) ORDER BY n`);
}
