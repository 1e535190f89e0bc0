import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { cursorAfter } from './cursor';
import { RESPONSE_TTL_DAYS } from './responses';

/** A stored chat completion: the completion object as answered (its `metadata` the row's), and when it was made. */
export const StoredCompletionRow = z.object({
  id: z.string(),
  completion: z.record(z.string(), z.unknown()),
  metadata: z.record(z.string(), z.string()),
});
export type StoredCompletionRow = z.infer<typeof StoredCompletionRow>;

const COLS = sql.fragment`id, completion, metadata`;
const LIVE = sql.fragment`expires_at > now()`;

/**
 * Stores a chat completion made with `store: true` for 30 days (as stored responses); the tenant's expired ones are
 * removed on the way. `replace`: a batch request answered again keeps its planned id, the newer answer wins.
 */
export async function saveChatCompletion(
  db: DatabasePool,
  c: {
    tenantId: string;
    id: string;
    model: string;
    metadata: Record<string, string>;
    messages: unknown[];
    completion: Record<string, unknown>;
    replace?: boolean;
  },
): Promise<void> {
  const messages = JSON.stringify(c.messages);
  const completion = JSON.stringify(c.completion);
  await db.query(sql.unsafe`
    WITH gone AS (DELETE FROM chat_completions WHERE tenant_id = ${c.tenantId} AND expires_at <= now())
    INSERT INTO chat_completions (id, tenant_id, model, metadata, messages, completion, size_bytes, expires_at)
    VALUES (${c.id}, ${c.tenantId}, ${c.model}, ${sql.jsonb(c.metadata)}, ${messages}::json, ${completion}::json,
      ${messages.length + completion.length}, now() + make_interval(days => ${RESPONSE_TTL_DAYS}))
    ${
      c.replace
        ? sql.fragment`ON CONFLICT (id) DO UPDATE SET completion = EXCLUDED.completion, size_bytes = EXCLUDED.size_bytes
            WHERE chat_completions.tenant_id = EXCLUDED.tenant_id`
        : sql.fragment``
    }`);
}

/** A live stored completion of the tenant; null when unknown, expired, deleted or another tenant's. */
export async function getChatCompletion(
  db: DatabasePool,
  tenantId: string,
  id: string,
): Promise<StoredCompletionRow | null> {
  return db.maybeOne(sql.type(StoredCompletionRow)`
    SELECT ${COLS} FROM chat_completions WHERE tenant_id = ${tenantId} AND id = ${id} AND ${LIVE}`);
}

/**
 * The tenant's live stored completions in creation order (`asc` or `desc`) after the completion `after`, optionally of
 * one model and holding every given metadata pair; `limit + 1` are read so the caller knows whether more follow.
 * @returns the rows, or null when `after` is not a live stored completion of the tenant
 */
export async function listChatCompletions(
  db: DatabasePool,
  o: {
    tenantId: string;
    model?: string;
    metadata: Record<string, string>;
    order: 'asc' | 'desc';
    after?: string;
    limit: number;
  },
): Promise<readonly StoredCompletionRow[] | null> {
  const cursor = await cursorAfter(db, { table: 'chat_completions', ...o, live: LIVE });
  if (!cursor) return null;
  const model = o.model !== undefined ? sql.fragment`AND model = ${o.model}` : sql.fragment``;
  const metadata = Object.keys(o.metadata).length
    ? sql.fragment`AND metadata @> ${sql.jsonb(o.metadata)}`
    : sql.fragment``;
  return db.any(sql.type(StoredCompletionRow)`
    SELECT ${COLS} FROM chat_completions WHERE tenant_id = ${o.tenantId} AND ${LIVE} ${model} ${metadata} ${cursor.where}
    ORDER BY ${cursor.orderBy} LIMIT ${o.limit + 1}`);
}

/** Replaces a stored completion's metadata; null when unknown. */
export async function updateChatCompletion(
  db: DatabasePool,
  tenantId: string,
  id: string,
  metadata: Record<string, string>,
): Promise<StoredCompletionRow | null> {
  return db.maybeOne(sql.type(StoredCompletionRow)`
    UPDATE chat_completions SET metadata = ${sql.jsonb(metadata)} WHERE tenant_id = ${tenantId} AND id = ${id} AND ${LIVE}
    RETURNING ${COLS}`);
}

/** Deletes a stored completion; false when unknown. */
export async function deleteChatCompletion(db: DatabasePool, tenantId: string, id: string): Promise<boolean> {
  const r = await db.query(
    sql.unsafe`DELETE FROM chat_completions WHERE tenant_id = ${tenantId} AND id = ${id} AND ${LIVE}`,
  );
  return r.rowCount > 0;
}

/** A stored completion's request messages, in order; null when unknown. */
export async function chatCompletionMessages(
  db: DatabasePool,
  tenantId: string,
  id: string,
): Promise<Array<Record<string, unknown>> | null> {
  return db.maybeOneFirst(sql.type(z.object({ messages: z.array(z.record(z.string(), z.unknown())) }))`
    SELECT messages FROM chat_completions WHERE tenant_id = ${tenantId} AND id = ${id} AND ${LIVE}`);
}
