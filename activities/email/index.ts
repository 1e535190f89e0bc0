import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type Mail from 'nodemailer/lib/mailer';
import type { ActivityDeps } from '../deps';
import { lazyModule } from '../lazy-module';
import {
  beginEmailAttempt,
  clearEmailDataSent,
  finishEmail,
  markEmailDataSent,
  type EmailRow,
  type EmailStatus,
} from '../store/emails';
import { createSmtpPool } from './transport';

export interface EmailRef {
  tenantId: string;
  emailId: string;
}

interface SmtpError extends Error {
  code?: string;
  responseCode?: number;
  response?: string;
}

const AMBIGUOUS =
  'The connection to the SMTP server was lost after the whole message had been sent and before the server answered: it may or may not have been delivered. It is not resent automatically (that could deliver it twice); send it again with a new Idempotency-Key if it did not arrive.';

/** nodemailer's MIME composer, loaded on the first email (see lazyModule). */
const mailComposer = lazyModule(
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- see lazyModule
  () => (require('nodemailer/lib/mail-composer') as typeof import('nodemailer/lib/mail-composer')).default,
);

/** The MIME message: plain `body`, with `html` as its alternative; fixed Message-ID and Date so every attempt sends the same message. */
async function compose(row: EmailRow): Promise<Buffer> {
  const MailComposer = mailComposer();
  const mail = new MailComposer({
    from: row.from_addr,
    to: row.to_addr,
    subject: row.subject,
    text: row.body,
    html: row.html ?? undefined,
    messageId: row.message_id,
    date: new Date(row.created_at),
  });
  return mail.compile().build();
}

/** Activities that deliver outgoing email through one SMTP pool per worker. */
export function createEmailActivities(deps: ActivityDeps) {
  const { db, log } = deps;
  let pool: Mail | undefined;
  /** Attempts waiting to hear that their message's DATA phase is complete, by Message-ID. */
  const dataWatch = new Map<string, () => void>();
  const smtp = (): Mail => {
    const url = deps.config.email.smtpUrl;
    if (!url) throw ApplicationFailure.nonRetryable('SVC_SMTP_URL is not set on the worker.', 'SmtpNotConfigured');
    pool ??= createSmtpPool(url, (messageId) => dataWatch.get(messageId)?.());
    return pool;
  };

  /**
   * One delivery attempt. Outcomes: `sent`; `failed` on a 5xx (permanent, the server's reply
   * kept); `uncertain` when the connection dropped after the whole message had been handed over
   * (also when an earlier attempt's worker died in that window). A 4xx or a connection failure
   * before the end of the message throws a retryable failure (the workflow's policy backs off).
   */
  async function sendEmail(ref: EmailRef): Promise<{ status: EmailStatus; smtpResponse?: string; error?: string }> {
    const row = await beginEmailAttempt(db, ref.tenantId, ref.emailId);
    if (!row) return { status: 'failed', error: 'The email is no longer pending.' };
    if (row.data_sent_at) {
      // A previous attempt handed over the whole message and then its worker vanished before the reply.
      await finishEmail(db, ref.tenantId, ref.emailId, { status: 'uncertain', error: AMBIGUOUS });
      return { status: 'uncertain', error: AMBIGUOUS };
    }
    const raw = await compose(row);
    const ctx = Context.current();
    const beat = setInterval(() => ctx.heartbeat(), 1000);
    let handedOver: Promise<void> | undefined;
    // From the end of DATA on, a drop is ambiguous: recorded so that a retry after a crash knows it too. A failed
    // record (database down) is only logged here: this attempt knows, and records the outcome itself below.
    dataWatch.set(
      row.message_id,
      () =>
        (handedOver ??= markEmailDataSent(db, ref.tenantId, ref.emailId).catch((err: Error) =>
          log.warn({ email: ref.emailId, err: err.message }, 'could not record the end of DATA; recording the outcome'),
        )),
    );
    try {
      const info = await smtp().sendMail({ envelope: { from: row.from_addr, to: [row.to_addr] }, raw });
      await handedOver;
      // Delivered: from here on a failure must never become a retry (a retry would send it again), so the
      // outcome is written until the database takes it.
      await durably(() => finishEmail(db, ref.tenantId, ref.emailId, { status: 'sent', smtpResponse: info.response }));
      log.info({ email: ref.emailId, attempt: row.attempts }, 'email sent');
      return { status: 'sent', smtpResponse: info.response };
    } catch (e) {
      const err = e as SmtpError;
      await handedOver;
      const code = err.responseCode;
      if (code && code >= 500) {
        await finishEmail(db, ref.tenantId, ref.emailId, {
          status: 'failed',
          smtpResponse: err.response ?? null,
          error: `The SMTP server refused the email: ${err.response ?? err.message}`,
        });
        return { status: 'failed', smtpResponse: err.response, error: err.response ?? err.message };
      }
      if (!code && handedOver) {
        await durably(() =>
          finishEmail(db, ref.tenantId, ref.emailId, { status: 'uncertain', error: `${AMBIGUOUS} (${err.message})` }),
        );
        log.warn({ email: ref.emailId, code: err.code }, 'connection lost after DATA: delivery uncertain, not retried');
        return { status: 'uncertain', error: AMBIGUOUS };
      }
      if (handedOver) await clearEmailDataSent(db, ref.tenantId, ref.emailId);
      log.info(
        { email: ref.emailId, attempt: row.attempts, code: err.code, smtp: code },
        'email attempt failed; retrying',
      );
      throw ApplicationFailure.retryable(
        code ? `The SMTP server deferred the email: ${err.response}` : `SMTP connection failed: ${err.message}`,
        'SmtpTransient',
      );
    } finally {
      dataWatch.delete(row.message_id);
      clearInterval(beat);
    }
  }

  /**
   * Runs a database write until it succeeds (every 500 ms, heartbeating, for up to 2 minutes): the outcome of a
   * message the server already has must be recorded, not turned into a retry that would send it again.
   */
  async function durably(write: () => Promise<unknown>): Promise<void> {
    for (let tries = 0; ; tries++) {
      try {
        await write();
        return;
      } catch (err) {
        if (tries >= 240) throw err;
        if (tries === 0)
          log.warn({ err: (err as Error).message }, 'email outcome not recorded yet; retrying the write');
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  /** Closes an email whose transient failures outlasted the retry policy. */
  async function emailGaveUp(ref: EmailRef & { error: string }): Promise<void> {
    await finishEmail(db, ref.tenantId, ref.emailId, { status: 'failed', error: ref.error });
  }

  return { sendEmail, emailGaveUp };
}
