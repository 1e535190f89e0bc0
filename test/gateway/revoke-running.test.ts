import { jobCancelReason } from '../../activities/store/job-keys';
import { revokeKey } from '../../activities/store/keys';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';

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
