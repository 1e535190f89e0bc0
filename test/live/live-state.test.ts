import { sql } from 'slonik';
import { sampleLive } from '../../activities/live/sample';
import { createTenant } from '../../activities/store/keys';
import { AeciResponse, EriResponse } from '../../schema/live';
import { ensureLiveSchedule } from '../../workers/live-schedule';
import { startHarness, type Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ worker: true });
}, 120_000);
afterAll(async () => h?.close());

/** Seeds chat messages (user texts) and finished tasks, all `minutesAgo` before now. */
async function seed(texts: string[], tasks: { completed: number; failed: number }, minutesAgo = 2): Promise<void> {
  const tenant = await createTenant(h.db);
  const session = `ses_${Math.random().toString(36).slice(2)}`;
  const at = new Date(Date.now() - minutesAgo * 60_000).toISOString();
  await h.db.query(
    sql.unsafe`INSERT INTO chat_sessions (id, tenant_id, session_key) VALUES (${session}, ${tenant}, ${session})`,
  );
  for (const t of texts) {
    await h.db.query(
      sql.unsafe`INSERT INTO chat_messages (tenant_id, session_id, role, content, created_at) VALUES (${tenant}, ${session}, 'user', ${t}, ${at})`,
    );
  }
  for (const [status, n] of [
    ['completed', tasks.completed],
    ['failed', tasks.failed],
  ] as const) {
    for (let i = 0; i < n; i++) {
      await h.db.query(sql.unsafe`INSERT INTO tasks (id, tenant_id, title, status, created_at, updated_at)
        VALUES (${`tsk_${Math.random().toString(36).slice(2)}`}, ${tenant}, 'seeded', ${status}, ${at}, ${at})`);
    }
  }
}

test('GET /v1/eri before any sample: every field, neutral state, sampled_at null', async () => {
  const r = await h.req('GET', '/v1/eri');
  expect(r.status).toBe(200);
  expect(EriResponse.parse(r.body)).toMatchObject({ eri: 0.55, sampled_at: null, pacing: 'calm', window_minutes: 15 });
  expect(r.headers.get('ratelimit-limit')).toBe('120');
});

test('a sample reads real signals from the database, is stored once per minute and served by /v1/eri', async () => {
  // 3 user messages + 4 tasks started = 7 requests in the 15-minute window; 4 jobs finished, 1 failed.
  await seed(['This is great, thanks!', 'love it, really helpful', 'the meeting is at noon'], {
    completed: 3,
    failed: 1,
  });
  const at = new Date().toISOString();
  const first = await sampleLive(h.db, at);
  const again = await sampleLive(h.db, at);
  // Idempotent: same minute, same row, same state (the machine load in `health` is measured anew).
  const { health: _h1, ...firstState } = first.state;
  const { health: _h2, ...againState } = again.state;
  expect({ id: again.id, at: again.sampledAt, state: againState }).toEqual({
    id: first.id,
    at: first.sampledAt,
    state: firstState,
  });
  expect(again.state.health?.cognitive_health).toMatch(/^(thriving|steady|strained|overloaded)$/);
  expect(first.state.signals).toEqual({
    sentiment: 1,
    sentiment_samples: 2,
    requests_per_min: 0.467,
    jobs_per_min: 0.267,
    error_rate: 0.25,
  });
  const r = await h.req('GET', '/v1/eri');
  expect(EriResponse.parse(r.body)).toMatchObject({
    eri: first.state.eri,
    ers: first.state.ers,
    sampled_at: first.sampledAt,
  });
  const daily = await h.db.oneFirst(
    sql.unsafe`SELECT sentiment_n FROM live_daily WHERE day = ${at.slice(0, 10)}::date`,
  );
  expect(daily).toBe(2);
});

test('a drop against a steady baseline creates one eri_drift reflection prompt', async () => {
  const now = Date.now();
  for (let i = 1; i <= 8; i++) {
    const t = new Date(Math.floor((now - (20 + i * 10) * 60_000) / 60_000) * 60_000).toISOString();
    await h.db.query(
      sql.unsafe`INSERT INTO live_samples (sampled_at, eri, state) VALUES (${t}, ${0.9 + (i % 2) * 0.01}, '{}'::jsonb) ON CONFLICT DO NOTHING`,
    );
  }
  await seed(
    ['terrible, broken, I hate this', 'awful and slow', 'frustrated and stuck'],
    { completed: 0, failed: 3 },
    1,
  );
  const s = await sampleLive(h.db, new Date(now + 60_000).toISOString());
  expect(s.state.drift).toMatchObject({ drifting: true, direction: 'down' });
  const p = await h.req('GET', '/v1/flow/prompt');
  expect(p.body.prompt).toMatchObject({ trigger: 'eri_drift' });
  expect(p.body.prompt.prompt).toContain('dipped');
  await sampleLive(h.db, new Date(now + 120_000).toISOString());
  const drifts = await h.db.oneFirst(sql.unsafe`SELECT count(*)::int FROM flow_prompts WHERE trigger = 'eri_drift'`);
  expect(drifts).toBe(1); // at most one per hour
  await h.req('POST', '/v1/flow/prompt/dismiss', { body: { id: p.body.prompt.id } });
});

test('GET /v1/aeci is the weekly snapshot of the stored daily aggregates', async () => {
  const today = new Date();
  for (let i = 1; i <= 6; i++) {
    const d = new Date(today.getTime() - i * 86_400_000).toISOString().slice(0, 10);
    await h.db.query(
      sql.unsafe`INSERT INTO live_daily (day, sentiment_sum, sentiment_n, eri_sum, eri_n) VALUES (${d}::date, ${-5}, 10, ${0.3 * 10}, 10)`,
    );
  }
  const r = await h.req('GET', '/v1/aeci');
  expect(r.status).toBe(200);
  const a = AeciResponse.parse(r.body);
  expect(a.days_with_data).toBe(7);
  expect(a.week_end).toBe(today.toISOString().slice(0, 10));
  expect(a.index).toBeLessThan(45);
  expect(a.sentiment_momentum).toBeGreaterThan(0); // today's sentiment is above the -0.5 of the older days
});

test('the Temporal schedule takes samples (no timer in the API process)', async () => {
  await h.db.query(sql.unsafe`DELETE FROM live_samples`);
  const id = await ensureLiveSchedule(h.client, { taskQueue: h.taskQueue, every: '1 hour' });
  expect(await ensureLiveSchedule(h.client, { taskQueue: h.taskQueue })).toBe(id); // idempotent
  const handle = h.client.schedule.getHandle(id);
  try {
    await handle.trigger();
    const sampled = await pollUntil(
      () => h.req('GET', '/v1/eri'),
      (r) => r.body?.sampled_at !== null,
      60_000,
    );
    expect(EriResponse.parse(sampled.body).sampled_at).not.toBeNull();
  } finally {
    await handle.delete();
  }
});

test('flow prompts: lifecycle, validation and 404', async () => {
  const empty = await h.req('GET', '/v1/flow/prompt');
  expect(empty.body).toEqual({ prompt: null, pending: 0 });
  const t = await h.req('POST', '/v1/flow/trigger', { body: { topic: 'the launch plan', note: 'before Friday' } });
  expect(t.status).toBe(201);
  expect(t.body).toMatchObject({ pending: 1, prompt: { trigger: 'manual', context: { note: 'before Friday' } } });
  expect(t.body.prompt.prompt).toContain('the launch plan');
  const next = await h.req('GET', '/v1/flow/prompt');
  expect(next.body).toEqual({ prompt: t.body.prompt, pending: 1 });
  const d = await h.req('POST', '/v1/flow/prompt/dismiss', { body: { id: t.body.prompt.id } });
  expect(d.body).toEqual({ ok: true, id: t.body.prompt.id, already_dismissed: false, pending: 0 });
  const twice = await h.req('POST', '/v1/flow/prompt/dismiss', { body: { id: t.body.prompt.id } });
  expect(twice.body.already_dismissed).toBe(true);
  expect((await h.req('POST', '/v1/flow/prompt/dismiss', { body: { id: 'flow_nope' } })).status).toBe(404);
  const bad = await h.req('POST', '/v1/flow/trigger', { body: { topic: 'x'.repeat(201) } });
  expect(bad.status).toBe(400);
  expect(bad.body.details[0].path).toBe('body.topic');
  expect((await h.req('POST', '/v1/flow/prompt/dismiss', { body: {} })).body.details[0].path).toBe('body.id');
});

test('public writes are rate limited per address: 429 with Retry-After', async () => {
  let limited: Awaited<ReturnType<Harness['req']>> | undefined;
  for (let i = 0; i < 45 && !limited; i++) {
    const r = await h.req('POST', '/v1/flow/trigger', { body: {} });
    if (r.status === 429) limited = r;
    else expect(r.status).toBe(201);
  }
  expect(limited?.body.code).toBe('rate_limited');
  const retry = Number(limited?.headers.get('retry-after'));
  expect(retry).toBeGreaterThanOrEqual(1);
  expect(retry).toBeLessThanOrEqual(60);
});
