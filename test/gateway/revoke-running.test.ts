import { jobCancelReason } from '../../activities/store/job-keys';
import { revokeKey } from '../../activities/store/keys';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';
import { chatLine, createChatBatch, uploadLines } from '../helpers/batch-files';

let fake: FakeOpenAI;
let h: Harness;
withFakeUpstream({ worker: true, scopes: ['runtime:chat'] }, (up) => ({ fake, h } = up));

const steps = [
  { title: 'One', prompt: 'Step one.' },
  { title: 'Two', prompt: 'Step two.' },
  { title: 'Three', prompt: 'Step three.' },
];

test('revoking the key that started a running goal cancels it before its next step (reason key_revoked)', async () => {
  const starter = await h.key(['runtime:chat']);
  const colleague = await h.key(['runtime:chat'], { tenantId: starter.tenantId });
  // The first step is slow, so the revocation lands while it runs.
  fake.script({ reply: 'slow step', delayMs: 4000 });
  fake.setDefault({ reply: 'quick step' });
  const created = await h.req('POST', '/v1/goals', { key: starter.apiKey, body: { title: 'Revocable', steps } });
  expect(created.status).toBe(200);
  const id = created.body.id;
  await fake.waitFor(() => fake.chats.length >= 1, 30_000);

  await revokeKey(h.db, starter.keyId); // as `npm run -s keys -- revoke` does: the NOTIFY reaches the API
  const ended = await pollUntil(
    () => h.req('GET', `/v1/goals/${id}`, { key: colleague.apiKey }),
    (r) => ['cancelled', 'completed', 'failed'].includes(r.body?.status),
    60_000,
  );
  expect(ended.body.status).toBe('cancelled');
  expect(ended.body.progress.done).toBeLessThan(3);
  expect(fake.chats.length).toBeLessThan(3);
  expect(await jobCancelReason(h.db, starter.tenantId, `goal-${id}`)).toBe('key_revoked');
  // Another tenant cannot read the reason.
  expect(await jobCancelReason(h.db, 'ten_other', `goal-${id}`)).toBeNull();

  // A goal of a key that stays valid is untouched.
  const kept = await h.req('POST', '/v1/goals', {
    key: colleague.apiKey,
    body: { title: 'Kept', steps: steps.slice(0, 1) },
  });
  const done = await pollUntil(
    () => h.req('GET', `/v1/goals/${kept.body.id}`, { key: colleague.apiKey }),
    (r) => r.body.status === 'completed',
    60_000,
  );
  expect(done.body.status).toBe('completed');
  expect(await jobCancelReason(h.db, starter.tenantId, `goal-${kept.body.id}`)).toBeNull();
});

test('revoking the key that executed a task cancels the run before its next step (reason key_revoked)', async () => {
  const starter = await h.key(['runtime:records']);
  const colleague = await h.key(['runtime:records'], { tenantId: starter.tenantId });
  fake.reset();
  fake.script({ reply: 'slow step', delayMs: 4000 });
  fake.setDefault({ reply: 'quick step' });
  const created = await h.req('POST', '/v1/tasks', {
    key: starter.apiKey,
    body: {
      title: 'Revocable run',
      steps: [
        { id: 'a', title: 'a', action: 'generate', args: { prompt: 'one' } },
        { id: 'b', title: 'b', action: 'generate', args: { prompt: 'two' }, depends_on: ['a'] },
      ],
    },
  });
  expect(created.status).toBe(201);
  const id = created.body.id;
  // The execute call's claim records the starting key in the same statement (no separate write).
  const started = await h.req('POST', `/v1/tasks/${id}/execute`, { key: starter.apiKey });
  expect(started.status).toBe(202);
  expect(started.body.attached).toBe(false);
  await fake.waitFor(() => fake.chats.length >= 1, 30_000);
  // Attaching to the running run (another key) records nothing: the run stays the starter's.
  const attached = await h.req('POST', `/v1/tasks/${id}/execute`, { key: colleague.apiKey });
  expect(attached.body.attached).toBe(true);

  await revokeKey(h.db, starter.keyId);
  const ended = await pollUntil(
    () => h.req('GET', `/v1/tasks/${id}`, { key: colleague.apiKey }),
    (r) => ['cancelled', 'completed', 'failed'].includes(r.body?.status),
    60_000,
  );
  expect(ended.body.status).toBe('cancelled');
  expect(ended.body.steps.find((s: { id: string }) => s.id === 'b').status).not.toBe('completed');
  expect(fake.chats.length).toBe(1);
  expect(await jobCancelReason(h.db, starter.tenantId, `task-${id}`)).toBe('key_revoked');
  expect(await jobCancelReason(h.db, 'ten_other', `task-${id}`)).toBeNull();
});

test('revoking the key that started a background response or a batch cancels them (reason key_revoked)', async () => {
  const starter = await h.key(['runtime:chat']);
  const colleague = await h.key(['runtime:chat'], { tenantId: starter.tenantId });
  fake.reset();
  fake.setDefault({ hang: true });
  const resp = await h.req('POST', '/v1/responses', {
    key: starter.apiKey,
    body: { model: 'mid', input: 'Never answered', background: true },
  });
  expect(resp.status).toBe(200);
  const batch = await createChatBatch(h, starter.apiKey, await uploadLines(h, starter.apiKey, [chatLine('a', 'x')]));
  expect(batch.body.status).toBe('in_progress');
  await fake.waitFor(() => fake.chats.length >= 2, 30_000);

  await revokeKey(h.db, starter.keyId);
  const r = await pollUntil(
    () => h.req('GET', `/v1/responses/${resp.body.id}`, { key: colleague.apiKey }),
    (x) => x.body.status !== 'queued' && x.body.status !== 'in_progress',
    30_000,
  );
  expect(r.body.status).toBe('cancelled');
  const b = await pollUntil(
    () => h.req('GET', `/v1/batches/${batch.body.id}`, { key: colleague.apiKey }),
    (x) => x.body.status === 'cancelled',
    30_000,
  );
  expect(b.body.request_counts).toEqual({ total: 1, completed: 0, failed: 0 });
  expect(await jobCancelReason(h.db, starter.tenantId, resp.body.id)).toBe('key_revoked');
  expect(await jobCancelReason(h.db, starter.tenantId, batch.body.id)).toBe('key_revoked');
  await fake.waitFor(() => fake.chats.every((c) => c.closedEarly), 10_000);
});
