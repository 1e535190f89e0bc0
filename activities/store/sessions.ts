import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Db } from './db';
import { newId } from './ids';

/** Chat sessions keyed by the client's X-Session-ID, per tenant and surface ('' = no surface). */
const SessionRow = z.object({
  id: z.string(),
  session_key: z.string(),
  surface: z.string(),
  title: z.string().nullable(),
  message_count: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type SessionRow = z.infer<typeof SessionRow>;

const MessageRow = z.object({ role: z.enum(['user', 'assistant']), content: z.string(), created_at: z.string() });
export type SessionMessageRow = z.infer<typeof MessageRow>;

const COLS = sql.fragment`id, session_key, surface, title, message_count, created_at, updated_at`;

/**
 * The latest turns of a session, oldest first, bounded by count and total characters
 * (the newest turns are kept). Empty when the session does not exist.
 */
export async function loadHistory(
  db: Db,
  opts: { tenantId: string; surface: string; sessionKey: string; limit?: number; maxChars?: number },
): Promise<Array<{ role: 'user' | 'assistant'; content: string }>> {
  const rows = await db.any(sql.type(MessageRow)`
    SELECT m.role, m.content, m.created_at FROM chat_messages m
    JOIN chat_sessions s ON s.id = m.session_id
    WHERE s.tenant_id = ${opts.tenantId} AND s.surface = ${opts.surface} AND s.session_key = ${opts.sessionKey}
      AND m.tenant_id = ${opts.tenantId}
    ORDER BY m.id DESC LIMIT ${opts.limit ?? 40}`);
  const out: Array<{ role: 'user' | 'assistant'; content: string }> = [];
  let chars = 0;
  for (const r of rows) {
    chars += r.content.length;
    if (chars > (opts.maxChars ?? 48_000) && out.length > 0) break;
    out.push({ role: r.role, content: r.content });
  }
  return out.reverse();
}

/** Stores one exchange (the user's message and the answer), creating the session on first use. */
export async function appendExchange(
  db: CommonQueryMethods,
  opts: {
    tenantId: string;
    surface: string;
    sessionKey: string;
    user: string;
    assistant: string;
    lane: string;
    provider: string;
  },
): Promise<{ id: string }> {
  return db.transaction(async (tx) => {
    const id = await tx.oneFirst(sql.type(z.object({ id: z.string() }))`
      INSERT INTO chat_sessions (id, tenant_id, session_key, surface, title, message_count)
      VALUES (${newId('ses')}, ${opts.tenantId}, ${opts.sessionKey}, ${opts.surface}, ${opts.user.slice(0, 80)}, 2)
      ON CONFLICT (tenant_id, surface, session_key)
      DO UPDATE SET message_count = chat_sessions.message_count + 2, updated_at = now()
      RETURNING id`);
    await tx.query(sql.unsafe`
      INSERT INTO chat_messages (tenant_id, session_id, role, content, lane, provider)
      VALUES (${opts.tenantId}, ${id}, 'user', ${opts.user}, ${opts.lane}, NULL),
             (${opts.tenantId}, ${id}, 'assistant', ${opts.assistant}, ${opts.lane}, ${opts.provider})`);
    return { id };
  });
}

export async function listSessions(
  db: Db,
  opts: { tenantId: string; surface?: string; limit: number; offset: number },
): Promise<readonly SessionRow[]> {
  const surface = opts.surface !== undefined ? sql.fragment`AND surface = ${opts.surface}` : sql.fragment``;
  return db.any(sql.type(SessionRow)`
    SELECT ${COLS} FROM chat_sessions WHERE tenant_id = ${opts.tenantId} ${surface}
    ORDER BY updated_at DESC, id LIMIT ${opts.limit} OFFSET ${opts.offset}`);
}

/**
 * One session with its messages (at most `limit`, oldest first). Without a surface, the most
 * recently updated session with that key. `null` when the tenant has none.
 */
export async function getSession(
  db: Db,
  opts: { tenantId: string; sessionKey: string; surface?: string; limit?: number },
): Promise<(SessionRow & { messages: readonly SessionMessageRow[] }) | null> {
  const surface = opts.surface !== undefined ? sql.fragment`AND surface = ${opts.surface}` : sql.fragment``;
  const row = await db.maybeOne(sql.type(SessionRow)`
    SELECT ${COLS} FROM chat_sessions WHERE tenant_id = ${opts.tenantId} AND session_key = ${opts.sessionKey} ${surface}
    ORDER BY updated_at DESC LIMIT 1`);
  if (!row) return null;
  const messages = await db.any(sql.type(MessageRow)`
    SELECT role, content, created_at FROM (
      SELECT id, role, content, created_at FROM chat_messages
      WHERE tenant_id = ${opts.tenantId} AND session_id = ${row.id} ORDER BY id DESC LIMIT ${opts.limit ?? 500}
    ) m ORDER BY id`);
  return { ...row, messages };
}
