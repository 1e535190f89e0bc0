import { sql } from 'slonik';
import { z } from 'zod';
import type { Db } from './db';
import { newId } from './ids';

/** Stores one feedback record (POST /v1/chat/feedback and /v1/feedback). */
export async function recordFeedback(
  db: Db,
  f: {
    tenantId: string;
    surface: string;
    profile?: string;
    sessionKey?: string;
    prompt: string;
    response: string;
    sass?: number;
    roast?: string;
    lesson?: string;
  },
): Promise<{ id: string }> {
  const id = newId('fbk');
  await db.query(sql.unsafe`
    INSERT INTO chat_feedback (id, tenant_id, surface, profile, session_key, prompt, response, sass, roast, lesson)
    VALUES (${id}, ${f.tenantId}, ${f.surface}, ${f.profile ?? null}, ${f.sessionKey ?? null}, ${f.prompt}, ${f.response},
            ${f.sass ?? null}, ${f.roast ?? null}, ${f.lesson ?? null})`);
  return { id };
}

const Signal = z.object({ mean: z.number().nullable(), count: z.number().int(), lessons: z.array(z.string()) });
type SignalRow = z.infer<typeof Signal>;

/** The last 20 records of the tenant on the surface (and the profile, when given, compared trimmed and case-blind). */
async function recentSignal(db: Db, opts: { tenantId: string; surface: string; profile?: string }): Promise<SignalRow> {
  const byProfile = opts.profile === undefined ? sql.fragment`TRUE` : sql.fragment`lower(btrim(profile)) = lower(btrim(${opts.profile}))`;
  return db.one(sql.type(Signal)`
    WITH recent AS (
      SELECT sass, lesson, created_at, id FROM chat_feedback
      WHERE tenant_id = ${opts.tenantId} AND surface = ${opts.surface} AND ${byProfile}
      ORDER BY created_at DESC, id DESC LIMIT 20
    )
    SELECT avg(sass)::float8 AS mean, count(sass)::int AS count,
           coalesce((SELECT array_agg(lesson ORDER BY created_at DESC, id DESC)
                     FROM (SELECT lesson, created_at, id FROM recent WHERE lesson IS NOT NULL AND lesson <> ''
                           ORDER BY created_at DESC, id DESC LIMIT 3) l), '{}') AS lessons
    FROM recent`);
}

/**
 * What recent feedback says (the last 20 records of the tenant on that surface, of the profile when
 * one is given): the mean desired sass, how many votes, and the three newest lessons. A profile
 * without votes (or without lessons) takes the votes (or lessons) of the whole surface.
 */
export async function feedbackSignal(
  db: Db,
  opts: { tenantId: string; surface: string; profile?: string },
): Promise<{ mean: number; count: number; lessons: string[] } | undefined> {
  const surfaceWide = () => recentSignal(db, { tenantId: opts.tenantId, surface: opts.surface });
  let row = opts.profile === undefined ? await surfaceWide() : await recentSignal(db, opts);
  if (opts.profile !== undefined && (row.count === 0 || row.lessons.length === 0)) {
    const wide = await surfaceWide();
    row = row.count === 0 ? { ...wide, lessons: row.lessons.length ? row.lessons : wide.lessons } : { ...row, lessons: wide.lessons };
  }
  if (row.count === 0 && row.lessons.length === 0) return undefined;
  return { mean: row.mean ?? 0, count: row.count, lessons: row.lessons };
}
