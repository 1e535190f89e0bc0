import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai';
import { startHarness, startQueueWorker, type Harness } from '../helpers/harness';
import { ensureLiveSchedule } from '../../workers/live-schedule';
import { pollUntil } from '../helpers/poll';

const FRESH_S = 15;
let h: Harness;
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI({ defaults: { reply: 'Sure.' } });
  // A short poller window (the default, 90 s, outlasts Temporal's ~70 s long polls): a stopped worker turns down sooner.
  h = await startHarness({ env: { OPENAI_BASE_URL: fake.url, SVC_DAEMON_POLLER_FRESH_S: String(FRESH_S) } });
}, 120_000);
afterAll(async () => {
  await h?.close();
  await fake?.close();
});

const chat = (key: string, surface: string) =>
  h.req('POST', '/v1/chat/completions', {
    key,
    headers: { 'X-Svc-Context': surface },
    body: { model: 'svc-oracle', messages: [{ role: 'user', content: 'Hi' }] },
  });

test('identity: default, validated PUT, round trip, tenant isolation and the effect on chat', async () => {
  const a = await h.key(['runtime:chat']);
  const b = await h.key(['runtime:chat']);
  const initial = await h.req('GET', '/v1/sovereign/identity', { key: a.apiKey });
  expect(initial.body).toEqual({
    persona: 'Svc Oracle',
    profile: { name: 'Default', tone: 'neutral', surface_overrides: {} },
    updated_at: null,
  });

  const bad = await h.req('PUT', '/v1/sovereign/identity', {
    key: a.apiKey,
    body: { name: 'X', tone: 'warm', surface_overrides: { studio: { working_style: 'reviewer' } } },
  });
  expect(bad.status).toBe(400);
  expect(bad.body.details[0].path).toBe('body.surface_overrides.studio.working_style');
  expect(
    (await h.req('PUT', '/v1/sovereign/identity', { key: a.apiKey, body: { name: 'X', tone: 'grumpy' } })).body
      .details[0].path,
  ).toBe('body.tone');

  const profile = {
    name: 'Studio buddy',
    tone: 'warm',
    surface_overrides: { studio: { working_style: 'muse' }, dev: { tone: 'direct' } },
  };
  const put = await h.req('PUT', '/v1/sovereign/identity', { key: a.apiKey, body: profile });
  expect(put.status).toBe(200);
  const got = await h.req('GET', '/v1/sovereign/identity', { key: a.apiKey });
  expect(got.body).toMatchObject({ persona: 'Svc Oracle', profile });
  expect(got.body.updated_at).not.toBeNull();
  expect((await h.req('GET', '/v1/sovereign/identity', { key: b.apiKey })).body.updated_at).toBeNull();

  fake.reset();
  expect((await chat(a.apiKey, 'studio')).status).toBe(200);
  expect((await chat(b.apiKey, 'studio')).status).toBe(200);
  expect((await chat(a.apiKey, 'dev')).status).toBe(200);
  const systems = fake.chats.map((r) => r.body.messages[0].content as string);
  expect(systems[0]).toContain('Working style: Muse.');
  expect(systems[0]).toContain('Profile "Studio buddy": keep a warm tone.');
  expect(systems[0]).toContain('Svc Oracle');
  expect(systems[1]).not.toContain('Working style:');
  expect(systems[1]).not.toContain('Studio buddy');
  expect(systems[2]).toContain('keep a direct tone');
});

test('daemons: schedule, worker pollers and the LISTEN connection; a queue without a running worker is down', async () => {
  const key = (await h.key(['runtime:models'])).apiKey;
  const before = await h.req('GET', '/v1/daemons', { key });
  expect(before.status).toBe(200);
  expect(before.body.status).toBe('degraded');
  expect(before.body.schedules[0]).toMatchObject({ id: `svc-live-sample-${h.taskQueue}`, status: 'missing' });
  expect(before.body.workers).toEqual([
    { task_queue: h.taskQueue, kind: 'workflow', status: 'down', pollers: [] },
    { task_queue: h.taskQueue, kind: 'activity', status: 'down', pollers: [] },
  ]);
  expect(before.body.listeners).toEqual([{ name: 'live-notify', status: 'not_attached' }]);

  const worker = await startQueueWorker(h);
  const id = await ensureLiveSchedule(h.client, { taskQueue: h.taskQueue, every: '1 hour' });
  const handle = h.client.schedule.getHandle(id);
  try {
    await handle.trigger();
    const after = await pollUntil(
      () => h.req('GET', '/v1/daemons', { key }),
      (r) =>
        r.body.workers.every((w: { status: string }) => w.status === 'up') && r.body.schedules[0].last_run !== null,
      60_000,
    );
    expect(after.body.schedules[0]).toMatchObject({ id, recent_failures: 0 });
    expect(after.body.schedules[0].next_run).not.toBeNull();
    expect(after.body.workers[0].pollers.length).toBeGreaterThan(0);
  } finally {
    await handle.delete();
    await worker.stop();
  }
  expect((await h.req('GET', '/v1/daemons')).status).toBe(401);
  // The stopped worker's pollers stay listed by Temporal; they turn stale once no poll has come for FRESH_S.
  // Polled every 2 s (each call describes the queue on Temporal): a condition, not a fixed sleep.
  let stopped = await h.req('GET', '/v1/daemons', { key });
  for (
    const deadline = Date.now() + 200_000;
    !stopped.body.workers.every((w: { status: string }) => w.status === 'down');
  ) {
    if (Date.now() > deadline)
      throw new Error(`stopped worker still reported: ${JSON.stringify(stopped.body.workers)}`);
    await new Promise((r) => setTimeout(r, 2000));
    stopped = await h.req('GET', '/v1/daemons', { key });
  }
  expect(stopped.body.schedules[0].status).toBe('missing');
  expect(stopped.body.workers[0].pollers[0].age_s).toBeGreaterThanOrEqual(FRESH_S);
  expect(stopped.body.status).toBe('degraded');
}, 300_000);
