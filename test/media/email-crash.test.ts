import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { sql } from 'slonik';
import { z } from 'zod';
import { startHarness, startQueueWorker, testEnv, type Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

jest.setTimeout(180_000);

let smtp: SmtpPeer;
let h: Harness;
let key: string;
const ROOT = path.resolve(__dirname, '../..');

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

async function startChildWorker(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-r', path.join(ROOT, 'test/helpers/ts-register.js'), path.join(ROOT, 'test/helpers/worker-child.ts')], {
    cwd: ROOT,
    env: {
      ...process.env, DATABASE_URL: h.dbUrl, TEMPORAL_ADDRESS: testEnv().temporalAddress, TEMPORAL_TASK_QUEUE: h.taskQueue,
      WORKFLOW_BUNDLE_PATH: testEnv().bundlePath, SVC_LOG_LEVEL: 'silent', SVC_SMTP_URL: smtp.url, SVC_SMTP_FROM: 'runtime@svc.test',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child worker not ready within 60 s: ${stderr.slice(-2000)}`)), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('WORKER_READY')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child worker exited with ${code}: ${stderr.slice(-2000)}`));
    });
  });
  return child;
}

const dataSentAt = (id: string) => h.db.oneFirst(sql.type(z.object({ d: z.string().nullable() }))`SELECT data_sent_at AS d FROM emails WHERE id = ${id}`);

test('worker SIGKILLed mid-send: before DATA the email is resent once by the next worker; after DATA it is not resent (uncertain); one message each', async () => {
  smtp.behave((m) => (m.to === 'held@example.com' && m.attempt === 1 ? 'hold-rcpt' : m.subject === 'Held after data' ? 'hold-after-data' : 'accept'));
  const child = await startChildWorker();
  const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_c, signal) => r(signal)));
  const a = await h.req('POST', '/v1/email/send', { key, body: { to: 'held@example.com', subject: 'Held at RCPT', body: 'a' } });
  const b = await h.req('POST', '/v1/email/send', { key, body: { to: 'other@example.com', subject: 'Held after data', body: 'b' } });
  expect([a.status, b.status]).toEqual([200, 200]);

  // Mid-send: A waits for the server's answer to RCPT TO; B's whole message was handed over and its reply is held.
  await pollUntil(async () => ({ rcpt: smtp.heldRcpt.length, data: smtp.dataSeen.includes('Held after data'), marked: await dataSentAt(b.body.id) }), (s) => s.rcpt === 1 && s.data && s.marked !== null);
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  smtp.behave(() => 'accept');

  const w = await startQueueWorker(h);
  try {
    const ra = await pollUntil(() => h.req('GET', `/v1/email/${a.body.id}`, { key }), (r) => r.body.status === 'sent', 90_000);
    const rb = await pollUntil(() => h.req('GET', `/v1/email/${b.body.id}`, { key }), (r) => r.body.status === 'uncertain', 90_000);
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
