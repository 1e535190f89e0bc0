/**
 * A plan step or agent tool call that creates something and then dies before its result is stored is
 * run again by Temporal. Under the step's key the second run must find what the first one made: the
 * same task, the same email (delivered once), not a second one. A different key is a new record.
 */
import pino from 'pino';
import { sql } from 'slonik';
import { z } from 'zod';
import { findTool, runTool } from '../../activities/tools/registry';
import type { ToolContext } from '../../activities/tools/types';
import { startHarness, type Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

jest.setTimeout(120_000);

let smtp: SmtpPeer;
let h: Harness;
let ctxFor: (idempotencyKey?: string) => ToolContext;
const scopes = ['runtime:chat', 'runtime:email:send'];

beforeAll(async () => {
  smtp = await startSmtpPeer();
  h = await startHarness({ worker: true, env: { SVC_SMTP_URL: smtp.url, SVC_SMTP_FROM: 'runtime@svc.test' } });
  const { keyId, tenantId } = await h.key(scopes);
  ctxFor = (idempotencyKey) => ({
    principal: { keyId, tenantId, kind: 'runtime', scopes, app: null },
    idempotencyKey,
    deps: {
      config: h.config,
      db: h.db,
      log: pino({ level: 'silent' }),
      temporal: { client: h.client, connection: h.connection },
    } as unknown as ToolContext['deps'],
    routes: () => [],
  });
});
afterAll(async () => {
  await h?.close();
  await smtp?.close();
});

const count = (q: ReturnType<typeof sql.unsafe>) => h.db.oneFirst(sql.type(z.object({ n: z.number() }))`${q}`);
const run = async (name: string, args: unknown, key?: string) => {
  const out = await runTool(findTool(name, scopes)!, args, ctxFor(key));
  if (!out.ok) throw new Error(out.error);
  return out.result as { id: string };
};

test('task_create under one step key makes one task, whatever the number of runs', async () => {
  const body = {
    title: 'Step-made task',
    steps: [{ id: 'a', title: 'Sum up', action: 'summarize', args: { text: 'x' } }],
  };
  const first = await run('task_create', body, 'plan-r1:make');
  const again = await run('task_create', body, 'plan-r1:make');
  expect(again.id).toBe(first.id);
  expect(await count(sql.unsafe`SELECT count(*)::int AS n FROM tasks WHERE title = 'Step-made task'`)).toBe(1);
  const other = await run('task_create', body, 'plan-r2:make');
  expect(other.id).not.toBe(first.id);
  expect(await count(sql.unsafe`SELECT count(*)::int AS n FROM tasks WHERE title = 'Step-made task'`)).toBe(2);
});

test('email_send under one step key queues and delivers one email', async () => {
  const body = { to: 'ops@svc.test', subject: 'Step email once', body: 'hello' };
  const first = await run('email_send', body, 'agent-a1:s1-tool-c1');
  const again = await run('email_send', body, 'agent-a1:s1-tool-c1');
  expect(again.id).toBe(first.id);
  await pollUntil(
    async () => smtp.messages.filter((m) => m.subject === 'Step email once').length,
    (n) => n >= 1,
    60_000,
  );
  expect(await count(sql.unsafe`SELECT count(*)::int AS n FROM emails WHERE subject = 'Step email once'`)).toBe(1);
  // Without a key (a direct call) each run is its own email.
  const a = await run('email_send', { ...body, subject: 'Step email free' });
  const b = await run('email_send', { ...body, subject: 'Step email free' });
  expect(a.id).not.toBe(b.id);
});
