import { itemsChars } from './item-size';
import { sql, type CommonQueryMethods, type DatabasePool, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { batchNotify } from './events';

/** How long a stored response is kept (OpenAI keeps them 30 days). */
export const RESPONSE_TTL_DAYS = 30;
/** Links of a previous_response_id chain followed at most (each holds a turn or more). */
export const MAX_CHAIN = 1000;

/**
 * Stores a response of POST /v1/responses for GET, input_items and previous_response_id; the tenant's expired ones
 * are removed on the way.
 */
export async function saveResponse(
  db: DatabasePool,
  r: {
    tenantId: string;
    id: string;
    previousId?: string;
    inputItems: unknown[];
    response: { output: unknown[] };
    /** A background response's work (see `ResponseJob`): stored with it, cleared when it ends. */
    job?: object;
    /** Replace a response of the tenant stored under this id before (a batch request answered again). */
    replace?: boolean;
  },
): Promise<void> {
  const size = itemsChars(r.inputItems) + itemsChars(r.response.output);
  await db.query(sql.unsafe`
    WITH gone AS (DELETE FROM responses WHERE tenant_id = ${r.tenantId} AND expires_at < now() RETURNING id),
    gone_events AS (DELETE FROM events WHERE tenant_id = ${r.tenantId} AND stream IN (SELECT 'response:' || id FROM gone))
    INSERT INTO responses (id, tenant_id, previous_id, input_items, response, size_bytes, expires_at, job)
    VALUES (${r.id}, ${r.tenantId}, ${r.previousId ?? null}, ${sql.json(r.inputItems as never)},
      ${sql.json(r.response as never)}, ${size}, now() + make_interval(days => ${RESPONSE_TTL_DAYS}),
      ${r.job ? sql.json(r.job as never) : null})
    ${
      r.replace
        ? sql.fragment`ON CONFLICT (id) DO UPDATE SET input_items = EXCLUDED.input_items, response = EXCLUDED.response,
            size_bytes = EXCLUDED.size_bytes WHERE responses.tenant_id = EXCLUDED.tenant_id`
        : sql.fragment``
    }`);
}

/** The event stream of a background response. */
export const responseStream = (id: string) => `response:${id}`;

/** A stored response and, while it runs in the background, its job; null when unknown. */
export async function getResponseRow(
  db: DatabasePool,
  tenantId: string,
  id: string,
): Promise<{ response: Record<string, unknown>; job: Record<string, unknown> | null } | null> {
  return db.maybeOne(sql.type(
    z.object({ response: z.record(z.string(), z.unknown()), job: z.record(z.string(), z.unknown()).nullable() }),
  )`
    SELECT response, job FROM responses WHERE tenant_id = ${tenantId} AND id = ${id} AND expires_at > now()`);
}

/**
 * Appends events to a background response's stream (ids in the given order, one NOTIFY carrying them when they fit)
 * while it still runs, in one statement: the row is locked first, so an append never lands after the write that
 * ended the response (a cancel, or the run's last write). With `response`, the stored Response is replaced; with
 * `end`, the job is cleared too (the response is over). Each event is `{ type, ...fields }`.
 * @returns false when the response no longer runs (cancelled, deleted, expired): nothing was written
 */
export async function writeResponseEvents(
  db: CommonQueryMethods,
  o: {
    tenantId: string;
    id: string;
    events: ReadonlyArray<{ type: string } & Record<string, unknown>>;
    response?: object;
    end?: boolean;
  },
): Promise<boolean> {
  const stream = responseStream(o.id);
  const update =
    o.response || o.end
      ? sql.fragment`, up AS (UPDATE responses r SET
          response = ${o.response ? sql.json(o.response as never) : sql.fragment`r.response`},
          job = ${o.end ? sql.fragment`NULL` : sql.fragment`r.job`}
        FROM live WHERE r.id = live.id AND r.tenant_id = ${o.tenantId} RETURNING r.id)`
      : sql.fragment``;
  const row = await db.one(sql.type(z.object({ live: z.boolean(), notified: z.boolean().nullable() }))`
    WITH live AS (
      SELECT id FROM responses WHERE tenant_id = ${o.tenantId} AND id = ${o.id} AND job IS NOT NULL FOR UPDATE
    )${update},
    ev AS (
      INSERT INTO events (tenant_id, stream, type, data)
      SELECT ${o.tenantId}, ${stream}, e.type, e.data::jsonb
      FROM live, unnest(${sql.array(
        o.events.map((e) => e.type),
        'text',
      )}::text[], ${sql.array(
        o.events.map((e) => JSON.stringify(e)),
        'text',
      )}::text[]) WITH ORDINALITY AS e(type, data, ord),
        LATERAL (SELECT pg_advisory_xact_lock(hashtextextended(${stream}, 7426))) AS stream_lock
      ORDER BY e.ord
      RETURNING id, type, data, created_at)
    SELECT EXISTS (SELECT 1 FROM live) AS live, ${batchNotify('ev', stream, o.tenantId)} IS NULL AS notified`);
  return row.live;
}

/**
 * Ends a background response that still runs as cancelled: its Response replaced by `cancelled(response)`, its job
 * cleared, and an `end` event (never sent to clients) closing its stream's readers. Null when it did not run any more
 * (finished, or unknown): the caller reads what it is.
 */
export async function cancelResponseRow(
  db: DatabasePool,
  tenantId: string,
  id: string,
  cancelled: (response: Record<string, unknown>) => object,
): Promise<object | null> {
  const row = await getResponseRow(db, tenantId, id);
  if (!row?.job) return null;
  const response = cancelled(row.response);
  const ended = await writeResponseEvents(db, { tenantId, id, events: [{ type: 'end' }], response, end: true });
  return ended ? response : null;
}

/** Whether a background response still runs (its job is stored). */
export async function responseRunning(db: DatabasePool, tenantId: string, id: string): Promise<boolean> {
  return db.exists(
    sql.unsafe`SELECT 1 FROM responses WHERE tenant_id = ${tenantId} AND id = ${id} AND job IS NOT NULL`,
  );
}

/** The newest sequence_number stored for a background response (-1 when none). */
export async function lastResponseSequence(db: DatabasePool, tenantId: string, id: string): Promise<number> {
  return db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
    SELECT coalesce(max((data ->> 'sequence_number')::int8), -1) AS n FROM events
    WHERE stream = ${responseStream(id)} AND tenant_id = ${tenantId}`);
}

/** The row id of a background response's event `sequence_number` (0 when unknown: the stream is read from the start). */
export async function eventIdOfSequence(db: DatabasePool, tenantId: string, id: string, seq: number): Promise<number> {
  const found = await db.maybeOneFirst(sql.type(z.object({ id: z.coerce.number() }))`
    SELECT id FROM events WHERE stream = ${responseStream(id)} AND tenant_id = ${tenantId}
      AND (data ->> 'sequence_number')::int8 = ${seq} ORDER BY id LIMIT 1`);
  return found ?? 0;
}

/** A stored response of the tenant, as it was answered; null when unknown, expired or another tenant's. */
export async function getResponse(db: DatabasePool, tenantId: string, id: string): Promise<object | null> {
  const row = await db.maybeOne(sql.type(z.object({ response: z.record(z.string(), z.unknown()) }))`
    SELECT response FROM responses WHERE tenant_id = ${tenantId} AND id = ${id} AND expires_at > now()`);
  return row?.response ?? null;
}

/** A stored response's own input items; null when unknown. */
export async function getInputItems(db: DatabasePool, tenantId: string, id: string): Promise<unknown[] | null> {
  const row = await db.maybeOne(sql.type(z.object({ input_items: z.array(z.unknown()) }))`
    SELECT input_items FROM responses WHERE tenant_id = ${tenantId} AND id = ${id} AND expires_at > now()`);
  return row?.input_items ?? null;
}

/**
 * A stored list of items (`items`, json) as a request reads it back: every image_generation_call's `result` left out
 * (the key removed) except where `keep` is true of its position `n` (1-based). When `within` (the stored text the list
 * is part of) names no such call, the list is read as it is; other items always are (their keys in their order).
 */
function withoutOlderImages(
  items: FragmentSqlToken,
  within: FragmentSqlToken,
  keep: (n: FragmentSqlToken) => FragmentSqlToken,
) {
  return sql.fragment`CASE WHEN strpos(${within}::text, 'image_generation_call') = 0 THEN ${items} ELSE (
    SELECT coalesce(json_agg(
      CASE WHEN e.item ->> 'type' = 'image_generation_call' AND NOT coalesce(${keep(sql.fragment`e.n`)}, false)
      THEN (e.item::jsonb - 'result')::json ELSE e.item END ORDER BY e.n), '[]'::json)
    FROM json_array_elements(${items}) WITH ORDINALITY AS e(item, n)) END`;
}

/**
 * The turns a response continues, oldest first: each stored response of its previous_response_id chain (itself
 * included) with its input items and output. Null when `id` is unknown; `tooLarge` when the turns hold more than
 * `maxBytes` (the walk stops there, so no more than that is read). A chain stops at a response deleted or expired,
 * and after MAX_CHAIN links.
 *
 * Made images do not count toward `maxBytes` (see item-size.ts), so their `result` strings are not read either: only
 * the chain's latest completed image_generation_call keeps its `result` (the image an edit changes, see `latestImage`:
 * the search stops at that call, so no older one is ever used); every other call comes without it. What one request
 * reads is then `maxBytes` and one image, however many images the chain holds.
 */
export async function responseChain(
  db: DatabasePool,
  tenantId: string,
  id: string,
  maxBytes: number,
): Promise<Array<{ input_items: unknown[]; output: unknown[] }> | null | 'tooLarge'> {
  // The latest completed image is in the newest turn (lowest depth) that has one: its output's last, else its input's.
  const keep = (part: number) => (n: FragmentSqlToken) =>
    sql.fragment`l.depth = c.depth AND l.part = ${part} AND l.n = ${n}`;
  const rows = await db.any(sql.type(
    z.object({ input_items: z.array(z.unknown()), output: z.array(z.unknown()), total: z.coerce.number() }),
  )`
    WITH RECURSIVE chain AS (
      SELECT id, previous_id, input_items, response, size_bytes::bigint AS total, 1 AS depth FROM responses
      WHERE tenant_id = ${tenantId} AND id = ${id} AND expires_at > now()
      UNION ALL
      SELECT r.id, r.previous_id, r.input_items, r.response, c.total + r.size_bytes, c.depth + 1 FROM responses r
      JOIN chain c ON r.id = c.previous_id
      WHERE r.tenant_id = ${tenantId} AND r.expires_at > now() AND c.depth < ${MAX_CHAIN} AND c.total <= ${maxBytes}
    ),
    latest AS (
      SELECT c.depth, p.part, e.n FROM chain c
      CROSS JOIN LATERAL (VALUES
        (0, CASE WHEN strpos(c.input_items::text, 'image_generation_call') > 0 THEN c.input_items END),
        (1, CASE WHEN strpos(c.response::text, 'image_generation_call') > 0 THEN c.response -> 'output' END)
      ) AS p(part, items)
      CROSS JOIN LATERAL json_array_elements(p.items) WITH ORDINALITY AS e(item, n)
      WHERE e.item ->> 'type' = 'image_generation_call' AND e.item ->> 'status' = 'completed'
      ORDER BY c.depth, p.part DESC, e.n DESC
      LIMIT 1
    )
    SELECT ${withoutOlderImages(sql.fragment`c.input_items`, sql.fragment`c.input_items`, keep(0))} AS input_items,
      ${withoutOlderImages(sql.fragment`(c.response -> 'output')`, sql.fragment`c.response`, keep(1))} AS output, c.total
    FROM chain c LEFT JOIN latest l ON true ORDER BY c.depth DESC`);
  if (!rows.length) return null;
  if (rows[0].total > maxBytes) return 'tooLarge';
  return rows.map((r) => ({ input_items: r.input_items, output: r.output }));
}

/** Deletes a stored response of the tenant; false when there was none. */
export async function deleteResponse(db: DatabasePool, tenantId: string, id: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    WITH gone AS (DELETE FROM responses WHERE tenant_id = ${tenantId} AND id = ${id} AND expires_at > now() RETURNING id),
    gone_events AS (DELETE FROM events WHERE tenant_id = ${tenantId} AND stream = ${responseStream(id)}
      AND EXISTS (SELECT 1 FROM gone))
    SELECT id FROM gone`);
  return r.rowCount > 0;
}
