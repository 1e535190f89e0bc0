import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';

/**
 * What the peer does with the next message, decided per message (`subject` from the raw headers):
 * accept; reject at end of DATA with a code (451, 550); store it then drop the connection
 * without answering; hold at RCPT TO or after DATA (stored) until the connection goes away.
 */
export type SmtpAction =
  'accept' | { reject: number; message?: string } | 'store-then-drop' | 'hold-rcpt' | 'hold-after-data';

export interface SmtpPeer {
  url: string;
  port: number;
  /** Messages the peer took responsibility for, parsed with mailparser. */
  messages: ParsedMail[];
  /** Every DATA phase that completed (accepted, rejected or dropped), by subject. */
  dataSeen: string[];
  /** Sessions currently held at RCPT TO, by recipient. */
  heldRcpt: string[];
  /** Chooses the action for a message; `attempt` counts DATA phases (or RCPTs) seen for that subject/recipient. */
  behave(fn: (m: { subject: string; to: string; attempt: number }) => SmtpAction): void;
  /** Resolves when a message with this subject has been stored. */
  received(subject: string): Promise<ParsedMail>;
  close(): Promise<void>;
}

/** A real SMTP server (npm smtp-server) on a loopback port: the outside mail system of the tests. */
export async function startSmtpPeer(): Promise<SmtpPeer> {
  const messages: ParsedMail[] = [];
  const dataSeen: string[] = [];
  const heldRcpt: string[] = [];
  const counts = new Map<string, number>();
  const waiters = new Map<string, (m: ParsedMail) => void>();
  const store = (m: ParsedMail) => {
    messages.push(m);
    waiters.get(m.subject ?? '')?.(m);
  };
  let decide: (m: { subject: string; to: string; attempt: number }) => SmtpAction = () => 'accept';
  const count = (k: string) => {
    const n = (counts.get(k) ?? 0) + 1;
    counts.set(k, n);
    return n;
  };

  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    size: 20 * 1024 * 1024,
    onRcptTo(address, session: SMTPServerSession, cb) {
      const action = decide({ subject: '', to: address.address, attempt: count(`rcpt:${address.address}`) });
      if (action === 'hold-rcpt') {
        heldRcpt.push(address.address);
        return; // never answers: the client waits until it (or its process) gives up
      }
      cb();
    },
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', async () => {
        const raw = Buffer.concat(chunks);
        const parsed = await simpleParser(raw);
        const subject = parsed.subject ?? '';
        const to = session.envelope.rcptTo[0]?.address ?? '';
        dataSeen.push(subject);
        const action = decide({ subject, to, attempt: count(`data:${subject}`) });
        if (action === 'accept' || action === 'hold-rcpt') {
          cb();
          return store(parsed);
        }
        if (action === 'store-then-drop' || action === 'hold-after-data') {
          // Like an MTA that queued the message before answering: it is stored, the reply never arrives.
          store(parsed);
          if (action === 'store-then-drop')
            for (const c of (server as unknown as { connections: Set<{ _socket: { destroy(): void } }> }).connections)
              c._socket.destroy();
          return;
        }
        const err = Object.assign(
          new Error(action.message ?? (action.reject >= 500 ? 'Mailbox unavailable' : 'Try again later')),
          { responseCode: action.reject },
        );
        cb(err);
      });
    },
  });
  // smtp-server emits a connection's error mid-transaction (a sending worker killed -9: ECONNRESET) on the server;
  // without a listener that is an uncaught error in the test process. An MTA notes it and carries on.
  server.on('error', () => undefined);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    dataSeen,
    heldRcpt,
    behave(fn) {
      decide = fn;
    },
    received(subject) {
      const found = messages.find((m) => m.subject === subject);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) =>
        waiters.set(subject, (m) => {
          waiters.delete(subject);
          resolve(m);
        }),
      );
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
