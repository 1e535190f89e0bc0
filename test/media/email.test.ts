import net from 'node:net';
import { sql } from 'slonik';
import { z } from 'zod';
import { startHarness, type Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';
import { startExtraApp } from '../helpers/extra-app';

jest.setTimeout(120_000);

let smtp: SmtpPeer;
let h: Harness;
let key: string;
let tenantId: string;

beforeAll(async () => {
  smtp = await startSmtpPeer();
  h = await startHarness({ worker: true, env: { SVC_SMTP_URL: smtp.url, SVC_SMTP_FROM: 'runtime@svc.test' } });
  ({ apiKey: key, tenantId } = await h.key(['runtime:email:send']));
});
afterAll(async () => {
  await h?.close();
  await smtp?.close();
});
beforeEach(() => smtp.behave(() => 'accept'));

const send = (body: unknown, o: { key?: string; headers?: Record<string, string> } = {}) =>
  h.req('POST', '/v1/email/send', { key: o.key ?? key, body, headers: o.headers });
const settled = (id: string, k = key) =>
  pollUntil(
    () => h.req('GET', `/v1/email/${id}`, { key: k }),
    (r) => !['queued', 'sending'].includes(r.body?.status),
    60_000,
  );
const delivered = (subject: string) => smtp.messages.filter((m) => m.subject === subject);

/** The same app (same database and Temporal) with other email settings: for the 503 and rate-limit cases. */
const appWith = (email: Partial<Harness['config']['email']>) =>
  startExtraApp(h, { config: { email: { ...h.config.email, ...email } } });

test('delivers headers and both parts; stable Message-ID; GET shows sent with the server reply', async () => {
  const res = await send({
    to: 'ada@example.com',
    subject: 'Report ready',
    body: 'The report is ready.',
    html: '<p>The report is <b>ready</b>.</p>',
  });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ object: 'email', status: 'queued', to: 'ada@example.com', subject: 'Report ready' });
  const done = await settled(res.body.id);
  expect(done.body).toMatchObject({ status: 'sent', attempts: 1, error: null });
  expect(done.body.smtp_response).toMatch(/^250/);
  const [m] = delivered('Report ready');
  expect(delivered('Report ready')).toHaveLength(1);
  expect(m.messageId).toBe(done.body.message_id);
  expect(done.body.message_id).toBe(`<${res.body.id}@svc.test>`);
  expect(m.from?.value[0].address).toBe('runtime@svc.test');
  expect((Array.isArray(m.to) ? m.to[0] : m.to)?.value.map((a) => a.address)).toEqual(['ada@example.com']);
  expect(m.text?.trim()).toBe('The report is ready.');
  expect(m.html).toContain('<p>The report is <b>ready</b>.</p>');
  expect(String(m.headers.get('content-type') && (m.headers.get('content-type') as { value: string }).value)).toBe(
    'multipart/alternative',
  );
});

test('the SMTP peer outlives a sender reset mid-transaction (a worker killed -9), then delivers the next email', async () => {
  // The peer used to leave smtp-server's error unheard: an uncaught ECONNRESET in the fault suite's process.
  const sock = net.connect(smtp.port, '127.0.0.1');
  const said: string[] = [];
  sock.on('data', (d) => said.push(d.toString()));
  const heard = (re: RegExp) =>
    pollUntil(
      async () => said.join(''),
      (t) => re.test(t),
      10_000,
    );
  await heard(/^220 /m);
  sock.write('EHLO killed.test\r\n');
  await heard(/^250 /m);
  sock.write('MAIL FROM:<runtime@svc.test>\r\n');
  await heard(/2\.1\.0|250 Accepted/);
  sock.resetAndDestroy();
  await new Promise((r) => setTimeout(r, 200));
  const res = await send({ to: 'ada@example.com', subject: 'After a reset', body: 'Still here.' });
  expect((await settled(res.body.id)).body.status).toBe('sent');
  expect(delivered('After a reset')).toHaveLength(1);
});

test('451 then success: retried with backoff, exactly one message', async () => {
  smtp.behave((m) =>
    m.subject === 'Deferred once' && m.attempt === 1 ? { reject: 451, message: 'Greylisted, try again' } : 'accept',
  );
  const res = await send({ to: 'bob@example.com', subject: 'Deferred once', body: 'hello' });
  const done = await settled(res.body.id);
  expect(done.body).toMatchObject({ status: 'sent', attempts: 2 });
  expect(smtp.dataSeen.filter((s) => s === 'Deferred once')).toHaveLength(2);
  expect(delivered('Deferred once')).toHaveLength(1);
});

test('550 is permanent: failed with the server reply, never retried', async () => {
  smtp.behave((m) => (m.subject === 'Refused' ? { reject: 550, message: 'No such user here' } : 'accept'));
  const res = await send({ to: 'nobody@example.com', subject: 'Refused', body: 'hello' });
  const done = await settled(res.body.id);
  expect(done.body).toMatchObject({ status: 'failed', attempts: 1 });
  expect(done.body.smtp_response).toBe('550 No such user here');
  expect(done.body.error).toContain('550 No such user here');
  expect(smtp.dataSeen.filter((s) => s === 'Refused')).toHaveLength(1);
  expect(delivered('Refused')).toHaveLength(0);
});

test('connection dropped after DATA: status uncertain, not resent (no duplicate, no loop)', async () => {
  smtp.behave((m) => (m.subject === 'Dropped' ? 'store-then-drop' : 'accept'));
  const res = await send({ to: 'carol@example.com', subject: 'Dropped', body: 'hello' });
  const done = await settled(res.body.id);
  expect(done.body).toMatchObject({ status: 'uncertain', attempts: 1 });
  expect(done.body.error).toMatch(/may or may not have been delivered/);
  const wf = await h.client.workflow.getHandle(`email-${res.body.id}`).result();
  expect(wf).toMatchObject({ status: 'uncertain' });
  expect(smtp.dataSeen.filter((s) => s === 'Dropped')).toHaveLength(1);
  expect(delivered('Dropped')).toHaveLength(1);
  // The pool recovers: the next email goes through.
  const next = await settled((await send({ to: 'carol@example.com', subject: 'After drop', body: 'hi' })).body.id);
  expect(next.body.status).toBe('sent');
});

test('database down when the server has the message: the outcome is recorded, never turned into a resend', async () => {
  // The first write of "end of DATA" for this subject fails, as it did during the fault test's PostgreSQL restart;
  // a sequence is not rolled back with the failed statement, so only the first try fails.
  await h.db.query(sql.unsafe`CREATE SEQUENCE IF NOT EXISTS mark_fails_once`);
  await h.db.query(sql.unsafe`
    CREATE OR REPLACE FUNCTION fail_first_mark() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.subject = 'Mark fails once' AND NEW.data_sent_at IS NOT NULL AND OLD.data_sent_at IS NULL
         AND nextval('mark_fails_once') = 1 THEN
        RAISE EXCEPTION 'simulated database outage';
      END IF;
      RETURN NEW;
    END $$`);
  await h.db.query(sql.unsafe`
    CREATE TRIGGER fail_first_mark BEFORE UPDATE ON emails FOR EACH ROW EXECUTE FUNCTION fail_first_mark()`);
  try {
    const res = await send({ to: 'dan@example.com', subject: 'Mark fails once', body: 'hello' });
    const done = await settled(res.body.id);
    expect(done.body).toMatchObject({ status: 'sent', attempts: 1 });
    expect(delivered('Mark fails once')).toHaveLength(1);
  } finally {
    await h.db.query(sql.unsafe`DROP TRIGGER fail_first_mark ON emails`);
  }
});

test('exactly once per Idempotency-Key; same key with another body is 409', async () => {
  const body = { to: 'dan@example.com', subject: 'Idempotent', body: 'once' };
  const headers = { 'Idempotency-Key': 'email-key-1' };
  const a = await send(body, { headers });
  const b = await send(body, { headers });
  expect(a.status).toBe(200);
  expect(b.status).toBe(200);
  expect(b.body.id).toBe(a.body.id);
  expect(b.headers.get('idempotent-replayed')).toBe('true');
  expect((await settled(a.body.id)).body.status).toBe('sent');
  expect(delivered('Idempotent')).toHaveLength(1);
  const c = await send({ ...body, body: 'other' }, { headers });
  expect(c.status).toBe(409);
});

test.each([
  ['subject', { to: 'a@example.com', subject: 'Hi\r\nBcc: victim@example.com', body: 'x' }],
  ['subject', { to: 'a@example.com', subject: 'Hi\nthere', body: 'x' }],
  ['subject', { to: 'a@example.com', subject: 'Hi\0', body: 'x' }],
  ['to', { to: 'a@example.com\r\nBcc: victim@example.com', subject: 'Hi', body: 'x' }],
  ['to', { to: 'a@example.com, b@example.com', subject: 'Hi', body: 'x' }],
  ['to', { to: 'not-an-address', subject: 'Hi', body: 'x' }],
  ['body', { to: 'a@example.com', subject: 'Hi' }],
])('400 naming %s for %j', async (field, body) => {
  const res = await send(body);
  expect(res.status).toBe(400);
  expect(res.body.details.map((d: { path: string }) => d.path)).toContain(`body.${field}`);
});

test('scope runtime:email:send required; another tenant gets 404; unknown id 404', async () => {
  const chatOnly = (await h.key(['runtime:chat'])).apiKey;
  const denied = await send({ to: 'a@example.com', subject: 'Hi', body: 'x' }, { key: chatOnly });
  expect(denied.status).toBe(403);
  const mine = await send({ to: 'erin@example.com', subject: 'Mine', body: 'x' });
  const other = (await h.key(['runtime:email:send'])).apiKey;
  expect((await h.req('GET', `/v1/email/${mine.body.id}`, { key: other })).status).toBe(404);
  expect((await h.req('GET', `/v1/email/${mine.body.id}`, { key: chatOnly })).status).toBe(403);
  expect((await h.req('GET', '/v1/email/email_nope', { key })).status).toBe(404);
  expect((await h.req('GET', `/v1/email/${mine.body.id}`, { key })).status).toBe(200);
});

test('unset SMTP settings: 503 saying how to configure; nothing stored', async () => {
  const app = await appWith({ smtpUrl: undefined });
  try {
    const res = await fetch(`${app.url}/v1/email/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ to: 'a@example.com', subject: 'Unconfigured', body: 'x' }),
    });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: string }).error).toMatch(/SVC_SMTP_URL/);
    const n = await h.db.oneFirst(
      sql.type(
        z.object({ n: z.number() }),
      )`SELECT count(*)::int AS n FROM emails WHERE subject = 'Unconfigured' AND tenant_id = ${tenantId}`,
    );
    expect(n).toBe(0);
  } finally {
    await app.close();
  }
});

test('per-tenant send rate: 429 with Retry-After past the limit; another tenant unaffected', async () => {
  const app = await appWith({ ratePerMinute: 2 });
  const post = (k: string, subject: string) =>
    fetch(`${app.url}/v1/email/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' },
      body: JSON.stringify({ to: 'rate@example.com', subject, body: 'x' }),
    });
  try {
    const k1 = (await h.key(['runtime:email:send'])).apiKey;
    const k2 = (await h.key(['runtime:email:send'])).apiKey;
    expect((await post(k1, 'Rate 1')).status).toBe(200);
    expect((await post(k1, 'Rate 2')).status).toBe(200);
    const limited = await post(k1, 'Rate 3');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await limited.json()) as { error: string }).error).toMatch(/rate/i);
    expect((await post(k2, 'Rate other tenant')).status).toBe(200);
  } finally {
    await app.close();
  }
});
