import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

/**
 * The generic persisted event stream: task step updates, job progress, anything a client
 * streams. Ids are monotonic per stream (appends to one stream are serialized by an advisory
 * lock, so a reader that saw id N never later finds an id < N committing), every append
 * NOTIFYs `svc_events` with the stream and id (and the events when small, see `EventNotice`), and
 * readers resume by id.
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

/**
 * NOTIFY payload: the stream, its tenant and newest id, and when they fit (`NOTICE_MAX_BYTES`, under
 * PostgreSQL's 8,000-byte cap) the events themselves, so a live reader need not read them back.
 * Every append of this module's writers sends one, under the stream's lock, so on one LISTEN
 * connection a stream's notices arrive in id order with none missing (PostgreSQL delivers the
 * notifications of different transactions in commit order); a notice without `ev` (too large, or
 * from a writer that sends ids only) means "read back from your last id".
 */
export interface EventNotice {
  stream: string;
  id: number;
  /** The events' tenant (absent in ids-only notices). */
  t?: string;
  /** This notice's events of the stream, ids ascending, when they fit; `created_at` as JSON renders a timestamptz. */
  ev?: Array<{ id: number; type: string; data: unknown; created_at: string }>;
}

/** Largest NOTIFY payload that carries its events (PostgreSQL refuses payloads of 8,000 bytes and more). */
export const NOTICE_MAX_BYTES = 7900;

const EventId = z.object({ id: z.number().int() });

/** One event row as a notice entry (JSON expression over the columns of `events` in scope, optionally qualified by `alias`). */
function noticeEntry(alias?: string) {
  const c = (name: string) => sql.identifier(alias ? [alias, name] : [name]);
  return sql.fragment`json_build_object('id', ${c('id')}, 'type', ${c('type')}, 'data', ${c('data')}, 'created_at', ${c('created_at')})`;
}

/**
 * The NOTIFY payload (text) for `ev`, a JSON array of notice entries of one stream and tenant
 * with newest id `maxId`: the full notice when it fits, else ids only.
 */
function noticeText(
  stream: ReturnType<typeof sql.fragment>,
  tenantId: ReturnType<typeof sql.fragment>,
  maxId: ReturnType<typeof sql.fragment>,
  ev: ReturnType<typeof sql.fragment>,
) {
  return sql.fragment`(SELECT CASE WHEN octet_length(n.p) <= ${NOTICE_MAX_BYTES} THEN n.p
      ELSE json_build_object('stream', ${stream}, 't', ${tenantId}, 'id', ${maxId})::text END
    FROM (SELECT json_build_object('stream', ${stream}, 't', ${tenantId}, 'id', ${maxId}, 'ev', ${ev})::text AS p) AS n)`;
}

/**
 * `pg_notify` of the row just inserted into `events` (for a RETURNING list of `INSERT INTO events`):
 * one notice per row, carrying the row when it fits.
 */
export const ROW_NOTIFY = sql.fragment`pg_notify(${EVENTS_CHANNEL}, ${noticeText(
  sql.fragment`stream`,
  sql.fragment`tenant_id`,
  sql.fragment`id`,
  sql.fragment`json_build_array(${noticeEntry()})`,
)})`;

/**
 * `pg_notify` of every row of `rel` (a CTE of rows inserted into `events` for ONE stream and
 * tenant, with id, type, data and created_at in its RETURNING) as ONE notice, ids ascending;
 * sends nothing when `rel` is empty. A scalar expression (its value is irrelevant).
 */
export function batchNotify(rel: string, stream: string, tenantId: string) {
  const r = sql.identifier([rel]);
  return sql.fragment`(SELECT pg_notify(${EVENTS_CHANNEL}, ${noticeText(
    sql.fragment`${stream}::text`,
    sql.fragment`${tenantId}::text`,
    sql.fragment`b.max_id`,
    sql.fragment`b.ev`,
  )}) FROM (SELECT max(e.id) AS max_id, json_agg(${noticeEntry('e')} ORDER BY e.id) AS ev FROM ${r} e) AS b
    WHERE b.max_id IS NOT NULL)`;
}

/**
 * An INSERT of one event per row of `source` (a table or CTE name; use `(SELECT 1) one` for a
 * single event) that takes the stream's lock right before the id is drawn and NOTIFYs in its
 * RETURNING (with the event when it fits, see `EventNotice`): one statement, so it joins the caller's statement or transaction and the lock is
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
    RETURNING id, ${ROW_NOTIFY} IS NULL AS notified`;
}

/**
 * Appends one event. Pass a transaction to commit it with the state change it describes;
 * NOTIFY inside a transaction is delivered on commit.
 */
export async function appendEvent(
  db: CommonQueryMethods,
  opts: { tenantId: string; stream: string; type: string; data: unknown },
): Promise<number> {
  return db.oneFirst(sql.prepared('event_append', EventId)`
    WITH ev AS (${eventInsertFrom(sql.fragment`(SELECT 1) AS one`, opts)}) SELECT id FROM ev`);
}

/** Whether a stream holds an event of `type` for `step` (data.step): what a retried step reads before it writes again. */
export async function hasStepEvent(
  db: CommonQueryMethods,
  o: { tenantId: string; stream: string; type: string; step: string },
): Promise<boolean> {
  return db.exists(sql.unsafe`
    SELECT 1 FROM events WHERE stream = ${o.stream} AND tenant_id = ${o.tenantId}
      AND type = ${o.type} AND data->>'step' = ${o.step}`);
}

/** Events of a stream with id > `afterId`, oldest first, at most `limit`. Tenant-filtered. */
export async function readEventsAfter(
  db: CommonQueryMethods,
  opts: { tenantId: string; stream: string; afterId: number; limit?: number; types?: string[] },
): Promise<readonly EventRow[]> {
  const types = opts.types?.length ? sql.fragment`AND type = ANY(${sql.array(opts.types, 'text')})` : sql.fragment``;
  return db.any(sql.prepared('events_after', EventRow)`
    SELECT id, stream, type, data, created_at FROM events
    WHERE stream = ${opts.stream} AND tenant_id = ${opts.tenantId} AND id > ${opts.afterId} ${types}
    ORDER BY id LIMIT ${Math.min(Math.max(opts.limit ?? 500, 1), 5000)}`);
}

/** Newest event id of a stream (0 when empty). */
export async function lastEventId(db: CommonQueryMethods, opts: { tenantId: string; stream: string }): Promise<number> {
  return db.oneFirst(sql.prepared('events_last_id', EventId)`
    SELECT coalesce(max(id), 0)::int8 AS id FROM events WHERE stream = ${opts.stream} AND tenant_id = ${opts.tenantId}`);
}
