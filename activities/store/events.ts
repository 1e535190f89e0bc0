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
 * Appends one event. Pass a transaction to commit it with the state change it describes;
 * NOTIFY inside a transaction is delivered on commit.
 */
export async function appendEvent(
  db: CommonQueryMethods,
  opts: { tenantId: string; stream: string; type: string; data: unknown },
): Promise<number> {
  return db.transaction(async (tx) => {
    await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${opts.stream}, 7426))`);
    const id = await tx.oneFirst(sql.type(z.object({ id: z.number().int() }))`
      INSERT INTO events (tenant_id, stream, type, data)
      VALUES (${opts.tenantId}, ${opts.stream}, ${opts.type}, ${sql.jsonb(opts.data as never)})
      RETURNING id`);
    const notice: EventNotice = { stream: opts.stream, id };
    await tx.query(sql.unsafe`SELECT pg_notify(${EVENTS_CHANNEL}, ${JSON.stringify(notice)})`);
    return id;
  });
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
