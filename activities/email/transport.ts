import type Mail from 'nodemailer/lib/mailer';
import { lazyModule } from '../lazy-module';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on the first SMTP pool (see lazyModule)
const nodemailer = lazyModule(() => require('nodemailer') as typeof import('nodemailer'));

/** Pool settings: a few long-lived connections reused across sends (the pooled p50 is ~10× the unpooled one). */
const POOL = {
  maxConnections: 4,
  maxMessages: 500,
  connectionTimeout: 10_000,
  greetingTimeout: 10_000,
  socketTimeout: 60_000,
};

/**
 * An SMTP pool from an `smtp://user:pass@host:port` or `smtps://` URL. The URL is parsed here (not
 * handed to nodemailer as a string) so that pooling is always on and the password never reaches a log line.
 */
export function createSmtpPool(smtpUrl: string, onDataSent: (messageId: string) => void): Mail {
  const u = new URL(smtpUrl);
  const secure = u.protocol === 'smtps:';
  return nodemailer().createTransport({
    pool: true,
    ...POOL,
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : secure ? 465 : 587,
    secure,
    auth: u.username ? { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } : undefined,
    debug: true,
    logger: dataPhaseWatcher(onDataSent),
  });
}

/** The domain part of the From address names the Message-ID (`<email-id@domain>`). */
export function messageIdFor(emailId: string, from: string): string {
  const domain = from.split('@')[1] ?? 'localhost';
  return `<${emailId}@${domain}>`;
}

type LogEntry = { tnx?: string; sid?: string; outByteCount?: number } | undefined;
const MESSAGE_ID = /^Message-ID:\s*(<[^>\r\n]+>)/im;

/**
 * Tells when a message's last byte (the terminating dot) has been written to its connection:
 * from then on a lost connection is ambiguous (the server may have stored it). nodemailer has no
 * hook for this, so this logger reads its own transaction log: per connection (`sid`), the
 * message data names the Message-ID, and the end-of-data line follows once DATA is complete.
 * Nothing is forwarded anywhere (the debug log holds AUTH lines: they are dropped here).
 */
function dataPhaseWatcher(onDataSent: (messageId: string) => void) {
  const current = new Map<string, string>();
  const log = (entry: LogEntry, message?: string) => {
    if (!entry?.sid || entry.tnx !== 'message') return;
    if (entry.outByteCount !== undefined) {
      const id = current.get(entry.sid);
      current.delete(entry.sid);
      if (id) onDataSent(id);
      return;
    }
    const id = typeof message === 'string' && !current.has(entry.sid) ? MESSAGE_ID.exec(message)?.[1] : undefined;
    if (id) current.set(entry.sid, id);
  };
  return { trace: log, debug: log, info: log, warn: log, error: log, fatal: log };
}
