import { itemChars } from './item-size';
import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { randomToken } from './ids';

export const ConversationRow = z.object({
  id: z.string(),
  metadata: z.record(z.string(), z.string()),
  created_at: z.coerce.number(),
});
export type ConversationRow = z.infer<typeof ConversationRow>;

const COLS = sql.fragment`id, metadata, extract(epoch FROM created_at)::int8 AS created_at`;
type Item = { id: string } & Record<string, unknown>;

/** The items as rows to insert after the conversation's last (their order kept). */
function itemRows(items: readonly Item[]) {
  return sql.unnest(
    items.map((it, i) => {
      const text = JSON.stringify(it);
      return [i, it.id, text, itemChars(it, text)];
    }),
    ['int4', 'text', 'text', 'int4'],
  );
}

/** Creates a conversation of the tenant with its first items. */
export async function createConversation(
  db: DatabasePool,
  tenantId: string,
  metadata: Record<string, string>,
  items: readonly Item[],
): Promise<ConversationRow> {
  const id = `conv_${randomToken(24)}`;
  return db.transaction(async (tx) => {
    const row = await tx.one(sql.type(ConversationRow)`
      INSERT INTO conversations (id, tenant_id, metadata) VALUES (${id}, ${tenantId}, ${sql.json(metadata)})
      RETURNING ${COLS}`);
    if (items.length) await appendRows(tx, tenantId, id, items);
    return row;
  });
}

async function appendRows(
  db: Pick<DatabasePool, 'query'>,
  tenantId: string,
  id: string,
  items: readonly Item[],
): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO conversation_items (tenant_id, conversation_id, item_id, item, size_bytes)
    SELECT ${tenantId}, ${id}, r.item_id, r.item::json, r.size FROM ${itemRows(items)} AS r(ord, item_id, item, size)
    ORDER BY r.ord`);
}

/** A conversation of the tenant; null when unknown. */
export async function getConversation(
  db: CommonQueryMethods,
  tenantId: string,
  id: string,
): Promise<ConversationRow | null> {
  return db.maybeOne(sql.type(ConversationRow)`
    SELECT ${COLS} FROM conversations WHERE tenant_id = ${tenantId} AND id = ${id}`);
}

/** Replaces a conversation's metadata; null when unknown. */
export async function updateConversation(
  db: DatabasePool,
  tenantId: string,
  id: string,
  metadata: Record<string, string>,
): Promise<ConversationRow | null> {
  return db.maybeOne(sql.type(ConversationRow)`
    UPDATE conversations SET metadata = ${sql.json(metadata)} WHERE tenant_id = ${tenantId} AND id = ${id}
    RETURNING ${COLS}`);
}

/** Deletes a conversation and its items; false when unknown. */
export async function deleteConversation(db: DatabasePool, tenantId: string, id: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`DELETE FROM conversations WHERE tenant_id = ${tenantId} AND id = ${id}`);
  return r.rowCount > 0;
}

/**
 * Adds items after a conversation's last, in one statement that also checks the conversation is the tenant's.
 * @returns false when the conversation is unknown (nothing added)
 */
export async function addConversationItems(
  db: CommonQueryMethods,
  tenantId: string,
  id: string,
  items: readonly Item[],
): Promise<boolean> {
  if (!items.length) return (await getConversation(db, tenantId, id)) !== null;
  const r = await db.query(sql.unsafe`
    INSERT INTO conversation_items (tenant_id, conversation_id, item_id, item, size_bytes)
    SELECT ${tenantId}, c.id, r.item_id, r.item::json, r.size
    FROM conversations c, ${itemRows(items)} AS r(ord, item_id, item, size)
    WHERE c.tenant_id = ${tenantId} AND c.id = ${id}
    ORDER BY r.ord`);
  return r.rowCount > 0;
}

/**
 * A conversation's items, oldest first (the context a response reads). Null when the conversation is unknown;
 * `tooLarge` when they hold more than `maxBytes` (what one request may send).
 *
 * Made images do not count toward `maxBytes` (see item-size.ts), so their `result` strings are not read either: only
 * the latest completed image_generation_call keeps its `result` (the image an edit changes, see `latestImage`: the
 * search stops at that call, so no older one is ever used); every other call comes without it. What one request reads
 * is then `maxBytes` and one image, however many images the conversation holds (the items listed by GET are whole).
 */
export async function conversationContext(
  db: DatabasePool,
  tenantId: string,
  id: string,
  maxBytes: number,
): Promise<unknown[] | null | 'tooLarge'> {
  const head = await db.maybeOne(sql.type(z.object({ total: z.coerce.number() }))`
    SELECT coalesce((SELECT sum(size_bytes) FROM conversation_items WHERE conversation_id = c.id AND tenant_id = ${tenantId}), 0)::int8
      AS total FROM conversations c WHERE c.tenant_id = ${tenantId} AND c.id = ${id}`);
  if (!head) return null;
  if (head.total > maxBytes) return 'tooLarge';
  const image = sql.fragment`strpos(item::text, 'image_generation_call') > 0 AND item ->> 'type' = 'image_generation_call'`;
  return [
    ...(await db.anyFirst(sql.type(z.object({ item: z.unknown() }))`
    WITH latest AS (
      SELECT seq FROM conversation_items WHERE tenant_id = ${tenantId} AND conversation_id = ${id}
        AND ${image} AND item ->> 'status' = 'completed'
      ORDER BY seq DESC LIMIT 1
    )
    SELECT CASE WHEN ${image} AND seq IS DISTINCT FROM (SELECT seq FROM latest)
      THEN (item::jsonb - 'result')::json ELSE item END AS item
    FROM conversation_items WHERE tenant_id = ${tenantId} AND conversation_id = ${id} ORDER BY seq`)),
  ];
}

/**
 * A page of a conversation's items (`limit + 1` read), newest or oldest first, after the item `after`.
 * Null when the conversation is unknown; `badCursor` when `after` is not one of its items.
 */
export async function listConversationItems(
  db: DatabasePool,
  o: { tenantId: string; id: string; order: 'asc' | 'desc'; after?: string; limit: number },
): Promise<unknown[] | null | 'badCursor'> {
  if (!(await getConversation(db, o.tenantId, o.id))) return null;
  let cursor = sql.fragment``;
  if (o.after !== undefined) {
    const seq = await db.maybeOneFirst(sql.type(z.object({ seq: z.coerce.number() }))`
      SELECT seq FROM conversation_items WHERE tenant_id = ${o.tenantId} AND conversation_id = ${o.id}
        AND item_id = ${o.after} ORDER BY seq LIMIT 1`);
    if (seq === null) return 'badCursor';
    cursor = o.order === 'asc' ? sql.fragment`AND seq > ${seq}` : sql.fragment`AND seq < ${seq}`;
  }
  const order = o.order === 'asc' ? sql.fragment`seq ASC` : sql.fragment`seq DESC`;
  return [
    ...(await db.anyFirst(sql.type(z.object({ item: z.unknown() }))`
    SELECT item FROM conversation_items WHERE tenant_id = ${o.tenantId} AND conversation_id = ${o.id} ${cursor}
    ORDER BY ${order} LIMIT ${o.limit + 1}`)),
  ];
}

/** One item of a conversation; null when the conversation or the item is unknown. */
export async function getConversationItem(
  db: DatabasePool,
  tenantId: string,
  id: string,
  itemId: string,
): Promise<unknown> {
  return db.maybeOneFirst(sql.type(z.object({ item: z.unknown() }))`
    SELECT item FROM conversation_items WHERE tenant_id = ${tenantId} AND conversation_id = ${id} AND item_id = ${itemId}
    ORDER BY seq LIMIT 1`);
}

/** Deletes one item of a conversation; false when unknown. */
export async function deleteConversationItem(
  db: DatabasePool,
  tenantId: string,
  id: string,
  itemId: string,
): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    DELETE FROM conversation_items WHERE seq = (SELECT seq FROM conversation_items
      WHERE tenant_id = ${tenantId} AND conversation_id = ${id} AND item_id = ${itemId} ORDER BY seq LIMIT 1)`);
  return r.rowCount > 0;
}
