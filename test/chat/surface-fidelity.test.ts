import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';

// Issue 10 item 3: `learn` only on the mastery compiler; android and mobile sessions scoped to
// their own surface; an over-long (invalid) profile is ignored, not a 400.

let h: Harness;
let fake: FakeOpenAI;
let key: string;

withFakeUpstream({ scopes: ['runtime:chat'], resetEach: { reply: 'ok' } }, (up) => ({ fake, h, key } = up));

function chat(content: string, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}) {
  return h.req('POST', '/v1/chat/completions', {
    key,
    body: { messages: [{ role: 'user', content }], ...extra },
    headers,
  });
}

test('X-Svc-Context: learn is ignored on chat, like any invalid surface', async () => {
  const r = await chat('hi', { 'X-Svc-Context': 'learn' });
  expect(r.status).toBe(200);
  expect(r.body.meta.surface).toBeNull();
  const plain = await chat('hi');
  expect(r.body.meta.sass_factor).toBe(plain.body.meta.sass_factor);
  const system = (i: number) => (fake.chats[i].body.messages[0].content as string).replace(/Current time:.*\n?/, '');
  expect(system(0)).toContain('Surface: Default.');
  expect(system(0)).toBe(system(1));
});

test('learn counts on /v1/learning/mastery/compile and is ignored on the other structured endpoints', async () => {
  const body = {
    objective: 'Learn TCP',
    sources: [
      {
        id: 's1',
        kind: 'notes',
        title: 'TCP',
        content: 'TCP congestion control uses slow start. Slow start doubles the window each round trip.',
      },
    ],
    preferences: { surfaces: ['learn', 'mobile'] },
  };
  const hintsOf = (r: { body: { cross_surface_reinforcement_hints: Array<{ surface: string }> } }) =>
    r.body.cross_surface_reinforcement_hints.map((x) => x.surface);
  const onLearn = await h.req('POST', '/v1/learning/mastery/compile', {
    key,
    body,
    headers: { 'X-Svc-Context': 'learn' },
  });
  const without = await h.req('POST', '/v1/learning/mastery/compile', { key, body });
  expect(onLearn.status).toBe(200);
  expect(hintsOf(without)).toContain('learn');
  expect(hintsOf(onLearn)).not.toContain('learn'); // the learner is already on learn
  // Elsewhere learn is no surface: the answer equals the one without the header.
  const plan = { intent: 'Send the weekly report', available_providers: [{ id: 'mail', name: 'Mail', kind: 'email' }] };
  const learnPlan = await h.req('POST', '/v1/actions/plan', { key, body: plan, headers: { 'X-Svc-Context': 'learn' } });
  const homePlan = await h.req('POST', '/v1/actions/plan', { key, body: plan, headers: { 'X-Svc-Context': 'home' } });
  const plainPlan = await h.req('POST', '/v1/actions/plan', { key, body: plan });
  expect(learnPlan.status).toBe(200);
  expect(learnPlan.body).toEqual(plainPlan.body);
  expect(homePlan.body).not.toEqual(plainPlan.body);
});

test('android and mobile sessions are scoped to their own surface', async () => {
  const id = 'device-session-1';
  fake.script({ reply: 'Hello Ada.' }, { reply: 'You are Ada.' }, { reply: 'Who are you?' });
  await chat('I am Ada.', { 'X-Svc-Context': 'android', 'X-Session-ID': id });
  await chat('Who am I?', { 'X-Svc-Context': 'android', 'X-Session-ID': id });
  expect(fake.chats[1].body.messages.slice(1).map((m: { content: string }) => m.content)).toEqual([
    'I am Ada.',
    'Hello Ada.',
    'Who am I?',
  ]);
  // The same id on mobile (or with no surface) is another, empty session.
  await chat('Who am I?', { 'X-Svc-Context': 'mobile', 'X-Session-ID': id });
  expect(fake.chats[2].body.messages.slice(1).map((m: { content: string }) => m.content)).toEqual(['Who am I?']);
  const android = await h.req('GET', '/v1/sessions?surface=android', { key });
  expect(android.body.data).toEqual([expect.objectContaining({ id, surface: 'android', message_count: 4 })]);
  const mobile = await h.req('GET', `/v1/sessions/${id}`, { key, headers: { 'X-Svc-Context': 'mobile' } });
  expect(mobile.body.surface).toBe('mobile');
  expect(mobile.body.messages).toHaveLength(2);
  // They pick no persona surface: behaviour stays the baseline.
  expect(fake.chats[2].body.messages[0].content).toContain('Surface: Default.');
});

test('an over-long or non-string profile is ignored (baseline applies), not a 400', async () => {
  const long = await chat('hi', { 'X-Svc-Context': 'dev' }, { profile: 'x'.repeat(500) });
  expect(long.status).toBe(200);
  expect(long.body.meta).toMatchObject({ surface: 'dev', profile: null });
  const odd = await chat('hi', { 'X-Svc-Context': 'dev' }, { profile: 42 });
  expect(odd.status).toBe(200);
  const feedback = await h.req('POST', '/v1/chat/feedback', {
    key,
    body: { prompt: 'p', response: 'r', profile: 'y'.repeat(500) },
  });
  expect(feedback.status).toBe(200);
});
