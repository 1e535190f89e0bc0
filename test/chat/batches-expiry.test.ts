import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';
import { chatLine, createChatBatch, uploadLines } from '../helpers/batch-files';

// A batch still running when its window ends (a durable timer in its workflow; 2 s here) expires with what was
// answered by then in its output file; a tenant runs at most SVC_BATCH_MAX_RUNNING batches at once (1 here).

let h: Harness;
let fake: FakeOpenAI;
let key: string;

withFakeUpstream(
  { scopes: ['runtime:chat'], worker: true, env: { SVC_BATCH_WINDOW_SECONDS: '2', SVC_BATCH_MAX_RUNNING: '1' } },
  (up) => ({ fake, h, key } = up),
);

test('a batch still running at the end of its window is expired: answered lines kept, the rest stopped', async () => {
  fake.onRequest((r) => (r.body.messages.at(-1).content === 'quick' ? { reply: 'done' } : { hang: true }));
  const file = await uploadLines(
    h,
    key,
    ['quick', 'slow', 'slow'].map((c, i) => chatLine(`l${i}`, c, 'mid')),
  );
  const created = await createChatBatch(h, key, file);
  expect(created.status).toBe(200);
  expect(created.body.expires_at - created.body.created_at).toBeLessThanOrEqual(3);
  const done = await pollUntil(
    () => h.req('GET', `/v1/batches/${created.body.id}`, { key }),
    (r) => !['in_progress', 'finalizing'].includes(r.body.status),
    30_000,
  );
  expect(done.body).toMatchObject({ status: 'expired', request_counts: { total: 3, completed: 1, failed: 0 } });
  expect(done.body.expired_at).toBeGreaterThanOrEqual(done.body.expires_at);
  const out = await h.req('GET', `/v1/files/${done.body.output_file_id}/content`, { key });
  expect(
    out.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).custom_id),
  ).toEqual(['l0']);
  expect(await h.client.workflow.getHandle(created.body.id).result()).toEqual({ status: 'expired' });
  await fake.waitFor(() => fake.chats.filter((c) => c.closedEarly).length === 2);
});

test('a tenant with SVC_BATCH_MAX_RUNNING batches running gets 429 for the next, until one has ended', async () => {
  const k = (await h.key(['runtime:chat'])).apiKey;
  fake.onRequest(() => ({ hang: true }));
  const file = await uploadLines(h, k, [chatLine('a', 'x')]);
  const create = () => createChatBatch(h, k, file);
  const first = await create();
  expect(first.body.status).toBe('in_progress');
  const second = await create();
  expect(second.status).toBe(429);
  expect(second.body.error).toMatch(/SVC_BATCH_MAX_RUNNING/);
  expect(second.headers.get('retry-after')).toBe('60');
  // Another tenant is not held back by this one's batches.
  expect((await h.req('GET', `/v1/batches/${first.body.id}`, { key })).status).toBe(404);
  await pollUntil(
    () => h.req('GET', `/v1/batches/${first.body.id}`, { key: k }),
    (r) => r.body.status === 'expired',
    30_000,
  );
  expect((await create()).status).toBe(200);
});
