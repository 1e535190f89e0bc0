import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';

export const EmailRow = z.object({
  id: z.string(),
  tenant_id: z.string(),
  to_addr: z.string(),
  subject: z.string(),
  body: z.string(),
  html: z.string().nullable(),
  from_addr: z.string(),
  message_id: z.string(),
  status: z.enum(['queued', 'sending', 'sent', 'failed', 'uncertain']),
  attempts: z.number(),
  data_sent_at: z.string().nullable(),
  smtp_response: z.string().nullable(),
  error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  sent_at: z.string().nullable(),
});
export type EmailRow = z.infer<typeof EmailRow>;
export type EmailStatus = EmailRow['status'];

const COLS = sql.fragment`id, tenant_id, to_addr, subject, body, html, from_addr, message_id, status, attempts,
  data_sent_at, smtp_response, error, created_at, updated_at, sent_at`;

/**
 * Inserts a queued email unless the tenant already queued `limit` emails in the last minute.
 * A per-tenant advisory lock makes the count and the insert one step (no burst past the limit).
 * @returns the row, or the seconds until the oldest email of the window leaves it
 */
export async function insertEmailWithinRate(
  db: DatabasePool,
  e: {
    id: string;
    tenantId: string;
    to: string;
    subject: string;
    body: string;
    html: string | null;
    from: string;
    messageId: string;
  },
  limit: number,
): Promise<{ row: EmailRow } | { retryAfter: number }> {
  return db.transaction(async (tx) => {
    await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtext('email-rate'), hashtext(${e.tenantId}))`);
    // An id derived from an Idempotency-Key may already exist (a retry after a crash): that email, not a second one.
    const existing = await tx.maybeOne(
      sql.type(EmailRow)`SELECT ${COLS} FROM emails WHERE id = ${e.id} AND tenant_id = ${e.tenantId}`,
    );
    if (existing) return { row: existing };
    const window = await tx.one(sql.type(z.object({ n: z.number(), oldest: z.number().nullable() }))`
      SELECT count(*)::int AS n, extract(epoch FROM min(created_at))::float8 AS oldest
      FROM emails WHERE tenant_id = ${e.tenantId} AND created_at > now() - interval '60 seconds'`);
    if (window.n >= limit) {
      const now = Date.now() / 1000;
      return { retryAfter: Math.max(1, Math.ceil((window.oldest ?? now) + 60 - now)) };
    }
    const row = await tx.one(sql.type(EmailRow)`
      INSERT INTO emails (id, tenant_id, to_addr, subject, body, html, from_addr, message_id, status)
      VALUES (${e.id}, ${e.tenantId}, ${e.to}, ${e.subject}, ${e.body}, ${e.html}, ${e.from}, ${e.messageId}, 'queued')
      RETURNING ${COLS}`);
    return { row };
  });
}

export async function getEmailRow(db: CommonQueryMethods, tenantId: string, id: string): Promise<EmailRow | null> {
  return db.maybeOne(sql.type(EmailRow)`SELECT ${COLS} FROM emails WHERE id = ${id} AND tenant_id = ${tenantId}`);
}

export async function deleteEmailRow(db: CommonQueryMethods, tenantId: string, id: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM emails WHERE id = ${id} AND tenant_id = ${tenantId}`);
}

/** Starts an attempt: counts it and moves a queued (or retried) email to `sending`. */
export async function beginEmailAttempt(
  db: CommonQueryMethods,
  tenantId: string,
  id: string,
): Promise<EmailRow | null> {
  return db.maybeOne(sql.type(EmailRow)`
    UPDATE emails SET status = 'sending', attempts = attempts + 1, updated_at = now()
    WHERE id = ${id} AND tenant_id = ${tenantId} AND status IN ('queued', 'sending')
    RETURNING ${COLS}`);
}

export async function markEmailDataSent(db: CommonQueryMethods, tenantId: string, id: string): Promise<void> {
  await db.query(
    sql.unsafe`UPDATE emails SET data_sent_at = now(), updated_at = now() WHERE id = ${id} AND tenant_id = ${tenantId}`,
  );
}

/** Clears the DATA marker of an attempt that ended with a definite answer (a retry starts clean). */
export async function clearEmailDataSent(db: CommonQueryMethods, tenantId: string, id: string): Promise<void> {
  await db.query(
    sql.unsafe`UPDATE emails SET data_sent_at = NULL, updated_at = now() WHERE id = ${id} AND tenant_id = ${tenantId}`,
  );
}

/** Records the final state; only an email still `sending`/`queued` changes (a closed one stays closed). */
export async function finishEmail(
  db: CommonQueryMethods,
  tenantId: string,
  id: string,
  o: { status: 'sent' | 'failed' | 'uncertain'; smtpResponse?: string | null; error?: string | null },
): Promise<EmailRow | null> {
  return db.maybeOne(sql.type(EmailRow)`
    UPDATE emails SET status = ${o.status}, smtp_response = ${o.smtpResponse ?? null}, error = ${o.error ?? null},
      sent_at = ${o.status === 'sent' ? sql.fragment`now()` : null}, updated_at = now()
    WHERE id = ${id} AND tenant_id = ${tenantId} AND status IN ('queued', 'sending')
    RETURNING ${COLS}`);
}
