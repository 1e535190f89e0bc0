import type { Db } from '../store/db';
import { notifyLive, notifyLiveMany, type LiveNotice } from '../store/live';

/** NOTIFY payloads are capped at 8000 bytes: token content is sent in pieces of at most this many characters. */
const PIECE = 1500;

/** Announces that a capability/agent job of `kind` started (public frame agent_dispatch: the kind only). */
export async function publishDispatch(db: Db, kind: string): Promise<void> {
  await notifyLive(db, { kind: 'dispatch', id: kind.slice(0, 50) });
}

/**
 * Streams generated text to the WebSocket clients that authenticated as `tenantId` and subscribed
 * to `session` (on any replica), then `done` when `done` is true: one round trip, in order.
 * `seq` numbers the pieces of one generation (PostgreSQL folds identical payloads of a transaction).
 */
export async function publishTokens(
  db: Db,
  m: { tenantId: string; session: string; content: string; done?: boolean; seq?: number },
): Promise<void> {
  const notices: LiveNotice[] = [];
  let seq = m.seq ?? 0;
  for (let i = 0; i < m.content.length; i += PIECE)
    notices.push({
      kind: 'token',
      id: m.session,
      tenant: m.tenantId,
      seq: seq++,
      content: m.content.slice(i, i + PIECE),
    });
  if (m.done) notices.push({ kind: 'done', id: m.session, tenant: m.tenantId, seq });
  await notifyLiveMany(db, notices);
}
