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

/** Mean, vote count and three newest lessons of the records in CTE `recent`. */
const signalOf = (recent: string) => sql.fragment`
  SELECT avg(sass)::float8 AS mean, count(sass)::int AS count,
         coalesce((SELECT array_agg(lesson ORDER BY created_at DESC, id DESC)
                   FROM (SELECT lesson, created_at, id FROM ${sql.identifier([recent])} WHERE lesson IS NOT NULL AND lesson <> ''
                         ORDER BY created_at DESC, id DESC LIMIT 3) l), '{}') AS lessons
  FROM ${sql.identifier([recent])}`;

/**
 * What recent feedback says (the last 20 records of the tenant on that surface, of the profile when
 * one is given): the mean desired sass, how many votes, and the three newest lessons. A profile
 * without votes (or without lessons) takes the votes (or lessons) of the whole surface.
 * One statement: the profile's and the surface's signals side by side (the same when no profile).
 */
export async function feedbackSignal(
  db: Db,
  opts: { tenantId: string; surface: string; profile?: string },
): Promise<{ mean: number; count: number; lessons: string[] } | undefined> {
  // Profiles compare trimmed and case-blind.
  const byProfile =
    opts.profile === undefined
      ? sql.fragment`TRUE`
      : sql.fragment`lower(btrim(profile)) = lower(btrim(${opts.profile}))`;
  const row = await db.one(sql.type(Signal)`
    WITH recent_profile AS (
      SELECT sass, lesson, created_at, id FROM chat_feedback
      WHERE tenant_id = ${opts.tenantId} AND surface = ${opts.surface} AND ${byProfile}
      ORDER BY created_at DESC, id DESC LIMIT 20
    ), recent_surface AS (
      SELECT sass, lesson, created_at, id FROM chat_feedback
      WHERE tenant_id = ${opts.tenantId} AND surface = ${opts.surface}
      ORDER BY created_at DESC, id DESC LIMIT 20
    ), p AS (${signalOf('recent_profile')}), w AS (${signalOf('recent_surface')})
    SELECT CASE WHEN p.count > 0 THEN p.mean ELSE w.mean END AS mean,
           CASE WHEN p.count > 0 THEN p.count ELSE w.count END AS count,
           CASE WHEN cardinality(p.lessons) > 0 THEN p.lessons ELSE w.lessons END AS lessons
    FROM p, w`);
  if (row.count === 0 && row.lessons.length === 0) return undefined;
  return { mean: row.mean ?? 0, count: row.count, lessons: row.lessons };
}
