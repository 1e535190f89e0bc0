import { startChildWorker } from '../helpers/child-worker';
import { sql } from 'slonik';
import { z } from 'zod';
import { startHarness, startQueueWorker, type Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

jest.setTimeout(180_000);

let smtp: SmtpPeer;
let h: Harness;
let key: string;

// No harness worker: the first worker is a child process this file kills with SIGKILL.
beforeAll(async () => {
  smtp = await startSmtpPeer();
  h = await startHarness({ env: { SVC_SMTP_URL: smtp.url, SVC_SMTP_FROM: 'runtime@svc.test' } });
  key = (await h.key(['runtime:email:send'])).apiKey;
});
afterAll(async () => {
  await h?.close();
  await smtp?.close();
});

const startWorkerChild = () => startChildWorker(h, { SVC_SMTP_URL: smtp.url, SVC_SMTP_FROM: 'runtime@svc.test' });

const dataSentAt = (id: string) =>
  h.db.oneFirst(
    sql.type(z.object({ d: z.string().nullable() }))`SELECT data_sent_at AS d FROM emails WHERE id = ${id}`,
  );

test('worker SIGKILLed mid-send: before DATA the email is resent once by the next worker; after DATA it is not resent (uncertain); one message each', async () => {
  smtp.behave((m) =>
    m.to === 'held@example.com' && m.attempt === 1
      ? 'hold-rcpt'
      : m.subject === 'Held after data'
        ? 'hold-after-data'
        : 'accept',
  );
  const child = await startWorkerChild();
  const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_c, signal) => r(signal)));
  const a = await h.req('POST', '/v1/email/send', {
    key,
    body: { to: 'held@example.com', subject: 'Held at RCPT', body: 'a' },
  });
  const b = await h.req('POST', '/v1/email/send', {
    key,
    body: { to: 'other@example.com', subject: 'Held after data', body: 'b' },
  });
  expect([a.status, b.status]).toEqual([200, 200]);

  // Mid-send: A waits for the server's answer to RCPT TO; B's whole message was handed over and its reply is held.
  await pollUntil(
    async () => ({
      rcpt: smtp.heldRcpt.length,
      data: smtp.dataSeen.includes('Held after data'),
      marked: await dataSentAt(b.body.id),
    }),
    (s) => s.rcpt === 1 && s.data && s.marked !== null,
  );
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  smtp.behave(() => 'accept');

  const w = await startQueueWorker(h);
  try {
    const ra = await pollUntil(
      () => h.req('GET', `/v1/email/${a.body.id}`, { key }),
      (r) => r.body.status === 'sent',
      90_000,
    );
    const rb = await pollUntil(
      () => h.req('GET', `/v1/email/${b.body.id}`, { key }),
      (r) => r.body.status === 'uncertain',
      90_000,
    );
    expect(ra.body.attempts).toBe(2);
    expect(rb.body.attempts).toBe(2);
    expect(await h.client.workflow.getHandle(`email-${b.body.id}`).result()).toMatchObject({ status: 'uncertain' });
  } finally {
    await w.stop();
  }
  expect(smtp.messages.filter((m) => m.subject === 'Held at RCPT')).toHaveLength(1);
  expect(smtp.messages.filter((m) => m.subject === 'Held after data')).toHaveLength(1);
  expect(smtp.dataSeen.filter((s) => s === 'Held after data')).toHaveLength(1);
});
