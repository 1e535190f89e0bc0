import { sql } from 'slonik';
import { z } from 'zod';
import type { Db } from './db';
import { newId } from './ids';

/*
 * Reflection prompts and rate-limit windows of the public (keyless) routes. Both are service-wide
 * on purpose: the public routes have no tenant, and every replica must see the same rows.
 */

const PromptRow = z.object({
  id: z.string(),
  trigger: z.string(),
  prompt: z.string(),
  context: z.record(z.string(), z.unknown()),
  created_at: z.string(),
});
export type FlowPrompt = z.infer<typeof PromptRow>;

const cols = sql.fragment`id, trigger, prompt, context, to_json(created_at)#>>'{}' AS created_at`;

/** Stores a prompt; with a given id a repeat is a no-op (idempotent drift triggers). */
export async function createFlowPrompt(
  db: Db,
  p: { id?: string; trigger: 'manual' | 'eri_drift'; prompt: string; context?: Record<string, unknown> },
): Promise<FlowPrompt | null> {
  return db.maybeOne(sql.type(PromptRow)`
    INSERT INTO flow_prompts (id, trigger, prompt, context) VALUES (${p.id ?? newId('flow')}, ${p.trigger}, ${p.prompt}, ${sql.jsonb((p.context ?? {}) as never)})
    ON CONFLICT (id) DO NOTHING RETURNING ${cols}`);
}

/** The oldest pending prompt and how many are pending. */
export async function nextFlowPrompt(db: Db): Promise<{ prompt: FlowPrompt | null; pending: number }> {
  const [prompt, pending] = await Promise.all([
    db.maybeOne(
      sql.type(PromptRow)`SELECT ${cols} FROM flow_prompts WHERE dismissed_at IS NULL ORDER BY created_at, id LIMIT 1`,
    ),
    db.oneFirst(
      sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM flow_prompts WHERE dismissed_at IS NULL`,
    ),
  ]);
  return { prompt, pending };
}

/** @returns 'dismissed', 'already' (dismissed before) or 'missing' */
export async function dismissFlowPrompt(db: Db, id: string): Promise<'dismissed' | 'already' | 'missing'> {
  const r = await db.query(
    sql.unsafe`UPDATE flow_prompts SET dismissed_at = now() WHERE id = ${id} AND dismissed_at IS NULL`,
  );
  if (r.rowCount > 0) return 'dismissed';
  const exists = await db.maybeOneFirst(
    sql.type(z.object({ id: z.string() }))`SELECT id FROM flow_prompts WHERE id = ${id}`,
  );
  return exists ? 'already' : 'missing';
}

/** Whether a drift prompt was created since `since`. */
export async function recentDriftPrompt(db: Db, since: Date): Promise<boolean> {
  const n = await db.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM flow_prompts WHERE trigger = 'eri_drift' AND created_at >= ${since.toISOString()}`);
  return n > 0;
}

/**
 * Counts one hit for `bucket` in the current one-minute window (shared by every replica).
 * @returns hits so far in this window and the seconds until it ends
 */
export async function hitRateLimit(db: Db, bucket: string): Promise<{ hits: number; resetSeconds: number }> {
  const r = await db.one(sql.type(z.object({ hits: z.number(), reset: z.number() }))`
    INSERT INTO public_rate_limits (bucket, window_start, hits) VALUES (${bucket}, date_trunc('minute', now()), 1)
    ON CONFLICT (bucket, window_start) DO UPDATE SET hits = public_rate_limits.hits + 1
    RETURNING hits, ceil(extract(epoch FROM (window_start + interval '1 minute' - now())))::int AS reset`);
  return { hits: r.hits, resetSeconds: Math.max(1, r.reset) };
}

/** Drops windows older than ten minutes (called by the sampling activity, not by request handlers). */
export async function pruneRateLimits(db: Db): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM public_rate_limits WHERE window_start < now() - interval '10 minutes'`);
}
