import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

/**
 * The generic persisted event stream: task step updates, job progress, anything a client
 * streams. Ids are monotonic per stream (appends to one stream are serialized by an advisory
 * lock, so a reader that saw id N never later finds an id < N committing), every append
 * NOTIFYs `svc_events` with the stream and id only, and readers resume by id.
 */
export const EVENTS_CHANNEL = 'svc_events';

export const EventRow = z.object({
  id: z.number().int(),
  stream: z.string(),
  type: z.string(),
  data: z.unknown(),
  created_at: z.string(),
});
export type EventRow = z.infer<typeof EventRow>;

/** NOTIFY payload: ids only (payloads are capped at 8000 bytes; readers fetch the rows). */
export interface EventNotice {
  stream: string;
  id: number;
}

/**
 * An INSERT of one event per row of `source` (a table or CTE name; use `(SELECT 1) one` for a
 * single event) that takes the stream's lock right before the id is drawn and NOTIFYs in its
 * RETURNING: one statement, so it joins the caller's statement or transaction and the lock is
 * held only from the id allocation to the commit. Appends to other streams never wait.
 */
export function eventInsertFrom(
  source: ReturnType<typeof sql.fragment>,
  opts: { tenantId: string; stream: string; type: string; data: unknown },
): ReturnType<typeof sql.fragment> {
  return sql.fragment`
    INSERT INTO events (tenant_id, stream, type, data)
    SELECT ${opts.tenantId}, ${opts.stream}, ${opts.type}, ${sql.jsonb(opts.data as never)}
    FROM ${source}, LATERAL (SELECT pg_advisory_xact_lock(hashtextextended(${opts.stream}, 7426))) AS stream_lock
    RETURNING id, pg_notify(${EVENTS_CHANNEL}, json_build_object('stream', stream, 'id', id)::text) IS NULL AS notified`;
}

/**
 * Appends one event. Pass a transaction to commit it with the state change it describes;
 * NOTIFY inside a transaction is delivered on commit.
 */
export async function appendEvent(
  db: CommonQueryMethods,
  opts: { tenantId: string; stream: string; type: string; data: unknown },
): Promise<number> {
  return db.oneFirst(sql.type(z.object({ id: z.number().int() }))`
    WITH ev AS (${eventInsertFrom(sql.fragment`(SELECT 1) AS one`, opts)}) SELECT id FROM ev`);
}

/** Events of a stream with id > `afterId`, oldest first, at most `limit`. Tenant-filtered. */
export async function readEventsAfter(
  db: CommonQueryMethods,
  opts: { tenantId: string; stream: string; afterId: number; limit?: number; types?: string[] },
): Promise<readonly EventRow[]> {
  const types = opts.types?.length ? sql.fragment`AND type = ANY(${sql.array(opts.types, 'text')})` : sql.fragment``;
  return db.any(sql.type(EventRow)`
    SELECT id, stream, type, data, created_at FROM events
    WHERE stream = ${opts.stream} AND tenant_id = ${opts.tenantId} AND id > ${opts.afterId} ${types}
    ORDER BY id LIMIT ${Math.min(Math.max(opts.limit ?? 500, 1), 5000)}`);
}

/** Newest event id of a stream (0 when empty). */
export async function lastEventId(db: CommonQueryMethods, opts: { tenantId: string; stream: string }): Promise<number> {
  return db.oneFirst(sql.type(z.object({ id: z.number().int() }))`
    SELECT coalesce(max(id), 0)::int8 AS id FROM events WHERE stream = ${opts.stream} AND tenant_id = ${opts.tenantId}`);
}
