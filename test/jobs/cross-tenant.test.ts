import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';

// Paths that aggregate over a tenant's rows: what one tenant does must never show up in another
// tenant's numbers or prompts, and each tenant's own rows must (the positive control).
let fake: FakeOpenAI;
let h: Harness;
let key: string;
withFakeUpstream(
  { worker: true, scopes: ['runtime:chat'], resetEach: { reply: 'ok' } },
  (up) => ({ fake, h, key } = up),
);

describe('GET /v1/pad/stats across tenants', () => {
  test("counts only the calling tenant's sessions and agents", async () => {
    const other = (await h.key(['runtime:chat'])).apiKey;
    const emptyStats = {
      window_sessions: 0,
      sessions: { running: 0, completed: 0, cancelled: 0 },
      agents: { total: 0, completed: 0, failed: 0 },
      success_rate: null,
    };
    expect((await h.req('GET', '/v1/pad/stats', { key: other })).body).toMatchObject(emptyStats);

    fake.onRequest((r) => (r.body.messages.at(-1).content.includes('BROKEN') ? { status: 400 } : { reply: 'ok' }));
    const created = await h.req('POST', '/v1/pad/dispatch', {
      key,
      body: {
        agents: [
          { name: 'a', prompt: 'one' },
          { name: 'b', prompt: 'two' },
          { name: 'c', prompt: 'BROKEN' },
        ],
      },
    });
    expect(created.status).toBe(200);
    await pollUntil(
      () => h.req('GET', `/v1/pad/sessions/${created.body.id}`, { key }),
      (r) => r.body.status === 'completed',
    );

    const mine = (await h.req('GET', '/v1/pad/stats', { key })).body;
    expect(mine).toMatchObject({
      window_sessions: 1,
      sessions: { completed: 1 },
      agents: { total: 3, completed: 2, failed: 1 },
    });
    expect(mine.success_rate).toBeCloseTo(2 / 3);
    const theirs = await h.req('GET', '/v1/pad/stats', { key: other });
    expect(theirs.status).toBe(200);
    expect(theirs.body).toMatchObject(emptyStats);
    expect(theirs.body.duration_ms).toEqual({ p50: null, p95: null });
  });
});

describe('feedback (sass, lessons) across tenants', () => {
  const chat = (k: string) =>
    h.req('POST', '/v1/chat/completions', {
      key: k,
      headers: { 'X-Svc-Context': 'studio' },
      body: { messages: [{ role: 'user', content: 'hi' }] },
    });
  const systemPrompt = () =>
    fake.chats
      .at(-1)!
      .body.messages.filter((m: { role: string }) => m.role === 'system')
      .map((m: { content: string }) => m.content)
      .join('\n');

  test("one tenant's votes and lessons tune only its own answers", async () => {
    const a = (await h.key(['runtime:chat'])).apiKey;
    const b = (await h.key(['runtime:chat'])).apiKey;
    const base = (await chat(b)).body.meta.sass_factor;
    expect((await chat(a)).body.meta.sass_factor).toBe(base);

    for (let i = 0; i < 5; i++) {
      const r = await h.req('POST', '/v1/chat/feedback', {
        key: a,
        headers: { 'X-Svc-Context': 'studio' },
        body: { prompt: 'p', response: 'r', sass: 0, lesson: i === 4 ? 'Tenant A wants bullet points.' : undefined },
      });
      expect(r.status).toBe(200);
    }
    // Tenant A: factor moved, lesson in the prompt.
    const forA = await chat(a);
    expect(forA.body.meta.sass_factor).toBeLessThan(base);
    expect(systemPrompt()).toContain('Tenant A wants bullet points.');
    // Tenant B on the same surface: untouched.
    const forB = await chat(b);
    expect(forB.body.meta.sass_factor).toBe(base);
    expect(systemPrompt()).not.toContain('Tenant A wants bullet points.');
    expect(systemPrompt()).not.toMatch(/Lessons from user feedback/);
    // B's own feedback answers with a factor computed from B's one vote only.
    const fb = await h.req('POST', '/v1/feedback', {
      key: b,
      headers: { 'X-Svc-Context': 'studio' },
      body: { prompt: 'p', response: 'r', sass: 1 },
    });
    expect(fb.body.sass_factor).toBeGreaterThan(base);
  });
});
