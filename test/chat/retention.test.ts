import { sql } from 'slonik';
import { z } from 'zod';
import { ensureRetentionSchedule } from '../../workers/live-schedule';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';

// The hourly retention sweep (a Temporal schedule starting retentionSweepWorkflow) removes expired responses, their
// event streams, expired files, expired stored chat completions and expired uploads' parts of every tenant, including
// tenants that write nothing more.

let h: Harness;
let fake: FakeOpenAI;
let key: string;
withFakeUpstream(
  { scopes: ['runtime:chat'], worker: true, resetEach: { reply: 'kept' } },
  (up) => ({ fake, h, key } = up),
);

const count = (q: ReturnType<typeof sql.unsafe>) =>
  h.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM (${q}) q`);

test('expired responses (with their events), files, stored chat completions and uploads’ parts of any tenant are removed; live ones stay', async () => {
  const other = (await h.key(['runtime:chat'])).apiKey;
  const old = await h.req('POST', '/v1/responses', { key, body: { input: 'old', background: true } });
  await pollUntil(
    () => h.req('GET', `/v1/responses/${old.body.id}`, { key }),
    (r) => r.body.status === 'completed',
  );
  const fresh = await h.req('POST', '/v1/responses', { key: other, body: { input: 'fresh' } });
  const form = () => {
    const f = new FormData();
    f.append('purpose', 'user_data');
    f.append('file', new Blob(['x']), 'x.txt');
    return f;
  };
  const upload = async (k: string) =>
    (
      (await (
        await fetch(`${h.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${k}` }, body: form() })
      ).json()) as { id: string }
    ).id;
  const oldFile = await upload(other);
  const freshFile = await upload(key);
  const pending = await h.req('POST', '/v1/uploads', {
    key: other,
    body: { filename: 'big.bin', purpose: 'user_data', bytes: 10, mime_type: 'application/octet-stream' },
  });
  const partForm = new FormData();
  partForm.append('data', new Blob(['01234']), 'part');
  const addPart = await fetch(`${h.url}/v1/uploads/${pending.body.id}/parts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${other}` },
    body: partForm,
  });
  expect(addPart.status).toBe(200);
  const storeChat = async (k: string) =>
    (
      await h.req('POST', '/v1/chat/completions', {
        key: k,
        body: { messages: [{ role: 'user', content: 'x' }], store: true },
      })
    ).body.id as string;
  const oldChat = await storeChat(other);
  const freshChat = await storeChat(key);
  await h.db.query(
    sql.unsafe`UPDATE chat_completions SET expires_at = now() - interval '1 minute' WHERE id = ${oldChat}`,
  );
  // Age them past their expiry, as 30 days (responses) or expires_after (files) would.
  await h.db.query(sql.unsafe`UPDATE responses SET expires_at = now() - interval '1 minute' WHERE id = ${old.body.id}`);
  await h.db.query(sql.unsafe`UPDATE files SET expires_at = now() - interval '1 minute' WHERE id = ${oldFile}`);
  await h.db.query(
    sql.unsafe`UPDATE uploads SET expires_at = now() - interval '1 minute' WHERE id = ${pending.body.id}`,
  );
  expect(await count(sql.unsafe`SELECT 1 FROM upload_parts WHERE upload_id = ${pending.body.id}`)).toBe(1);
  expect(await count(sql.unsafe`SELECT 1 FROM events WHERE stream = ${`response:${old.body.id}`}`)).toBeGreaterThan(3);

  const id = await ensureRetentionSchedule(h.client, { taskQueue: h.taskQueue, every: '1 hour' });
  expect(await ensureRetentionSchedule(h.client, { taskQueue: h.taskQueue })).toBe(id); // idempotent
  const desc = await h.client.schedule.getHandle(id).describe();
  expect(desc.action).toMatchObject({ type: 'startWorkflow', workflowType: 'retentionSweepWorkflow' });
  await h.client.schedule.getHandle(id).trigger();
  await pollUntil(
    () => count(sql.unsafe`SELECT 1 FROM responses WHERE id = ${old.body.id}`),
    (n) => n === 0,
  );

  expect(await count(sql.unsafe`SELECT 1 FROM events WHERE stream = ${`response:${old.body.id}`}`)).toBe(0);
  expect(await count(sql.unsafe`SELECT 1 FROM files WHERE id = ${oldFile}`)).toBe(0);
  // Uploads' parts come late in the sweep: waited for as the responses were.
  await pollUntil(
    () => count(sql.unsafe`SELECT 1 FROM upload_parts WHERE upload_id = ${pending.body.id}`),
    (n) => n === 0,
  );
  expect((await h.req('GET', `/v1/responses/${fresh.body.id}`, { key: other })).status).toBe(200);
  expect((await h.req('GET', `/v1/files/${freshFile}`, { key })).status).toBe(200);
  expect(await count(sql.unsafe`SELECT 1 FROM chat_completions WHERE id = ${oldChat}`)).toBe(0);
  expect((await h.req('GET', `/v1/chat/completions/${freshChat}`, { key })).status).toBe(200);
  expect(fake.chats.length).toBe(4);
  await h.client.schedule.getHandle(id).delete();
});
