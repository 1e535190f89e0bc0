import pino from 'pino';
import { setLimits, usageReport } from '../../activities/store/rate-limits';
import { createGateway } from '../../api/gateway';
import { revokeKey } from '../../activities/store/keys';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';

let fake: FakeOpenAI;
let h: Harness;
// Short windows so a "minute" passes within the test; counters sync every 50 ms.
withFakeUpstream(
  {
    scopes: ['runtime:chat'],
    env: { SVC_LIMIT_MINUTE_MS: '1500', SVC_LIMIT_DAY_MS: '4000', SVC_LIMIT_SYNC_MS: '50' },
    resetEach: { reply: 'ok fine', usage: { prompt_tokens: 7, completion_tokens: 3 } },
  },
  (up) => ({ fake, h } = up),
);

const chat = (key: string, extra: Record<string, unknown> = {}, path = '/v1/chat/completions', model = 'svc-oracle') =>
  h.req('POST', path, { key, body: { model, messages: [{ role: 'user', content: 'hello' }], ...extra } });

test('requests per minute: the third call in a window is refused with 429, Retry-After and x-ratelimit headers; the next window admits again', async () => {
  const k = await h.key(['runtime:chat']);
  await setLimits(h.db, k.tenantId, k.keyId, { requests_per_minute: 2 });
  // The window may turn over between calls; wait for the start of a fresh one so three calls land in it.
  const first = await pollUntil(
    () => chat(k.apiKey),
    (r) => r.status === 200 && r.headers.get('x-ratelimit-remaining-requests') === '1',
  );
  expect(first.headers.get('x-ratelimit-limit-requests')).toBe('2');
  expect(first.headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+(ms|s)$/);
  const second = await chat(k.apiKey);
  const third = await chat(k.apiKey);
  // Either the third call hit the limit, or the window turned over between calls (then the second, or the third,
  // saw a fresh window: the one the third opened admits it with one request left).
  if (second.headers.get('x-ratelimit-remaining-requests') === '0' && third.status === 200)
    expect(third.headers.get('x-ratelimit-remaining-requests')).toBe('1');
  else if (second.headers.get('x-ratelimit-remaining-requests') === '0') {
    expect(third.status).toBe(429);
    expect(third.body.code).toBe('rate_limited');
    expect(third.body.error).toContain('requests per minute');
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(third.headers.get('x-ratelimit-remaining-requests')).toBe('0');
  }
  // A later window admits again.
  await pollUntil(
    () => chat(k.apiKey),
    (r) => r.status === 200,
  );
});

test('tokens per day: counted from the upstream usage; once spent, 429 until the day window turns', async () => {
  const k = await h.key(['runtime:chat']);
  await setLimits(h.db, k.tenantId, k.keyId, { tokens_per_day: 15 });
  // 10 tokens per call (7 in + 3 out): the first two calls fit under 15 only in the same window; find one refused.
  const refused = await pollUntil(
    () => chat(k.apiKey, {}, '/v1/mid/chat/completions', 'mid'),
    (r) => r.status === 429,
    20_000,
  );
  expect(refused.body.error).toContain('tokens per day');
  expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
  await pollUntil(
    () => chat(k.apiKey, {}, '/v1/mid/chat/completions', 'mid'),
    (r) => r.status === 200,
  );
});

test('a tenant-wide limit binds all of its keys; GET /v1/key shows the key and tenant limits', async () => {
  const a = await h.key(['runtime:chat']);
  const b = await h.key(['runtime:chat'], { tenantId: a.tenantId });
  await setLimits(h.db, a.tenantId, '', { requests_per_minute: 1000, tokens_per_month: 5 });
  await setLimits(h.db, a.tenantId, a.keyId, { tokens_per_minute: 999 });
  const info = await h.req('GET', '/v1/key', { key: a.apiKey });
  expect(info.status).toBe(200);
  expect(info.body.limits).toEqual({
    key: { tokens_per_minute: 999 },
    tenant: { requests_per_minute: 1000, tokens_per_month: 5 },
  });
  expect((await chat(a.apiKey)).status).toBe(200); // 10 tokens: the month budget of 5 is now spent
  const viaB = await pollUntil(
    () => chat(b.apiKey),
    (r) => r.status === 429,
  );
  expect(viaB.body.error).toContain('tokens per month');
  // Another tenant is untouched.
  const other = await h.key(['runtime:chat']);
  expect((await chat(other.apiKey)).status).toBe(200);
});

test('x-ratelimit headers on every model route (JSON, stream, lanes, commons) of a limited key', async () => {
  const k = await h.key(['runtime:chat']);
  await setLimits(h.db, k.tenantId, k.keyId, { requests_per_minute: 10_000, tokens_per_minute: 1_000_000 });
  const answers = [
    await chat(k.apiKey),
    await chat(k.apiKey, { stream: true }),
    await chat(k.apiKey, {}, '/v1/micro/chat/completions', 'micro'),
    await chat(k.apiKey, {}, '/v1/slm/commons/completions', 'slm-fast'),
  ];
  for (const r of answers) {
    expect(r.status).toBe(200);
    expect(r.headers.get('x-ratelimit-limit-requests')).toBe('10000');
    expect(r.headers.get('x-ratelimit-limit-tokens')).toBe('1000000');
    expect(Number(r.headers.get('x-ratelimit-remaining-requests'))).toBeLessThan(10_000);
    expect(r.headers.get('x-ratelimit-reset-tokens')).toMatch(/^\d+(ms|s)$/);
  }
});

test('usage report: streamed usage counted, estimates marked, grouped by key, lane and day, per tenant only', async () => {
  const k = await h.key(['runtime:chat']);
  const stranger = await h.key(['runtime:chat']);
  expect((await chat(k.apiKey, { stream: true })).text).toContain('[DONE]');
  expect(fake.chats.at(-1)?.body.stream_options).toEqual({ include_usage: true });
  fake.setDefault({ reply: 'no usage here', usage: null });
  expect((await chat(k.apiKey, {}, '/v1/mid/chat/completions', 'mid')).status).toBe(200);
  fake.setDefault({ status: 500 });
  expect((await chat(k.apiKey, {}, '/v1/mid/chat/completions', 'mid')).status).toBeGreaterThanOrEqual(500);

  const byLane = await h.req('GET', '/v1/usage?group_by=lane', { key: k.apiKey });
  expect(byLane.status).toBe(200);
  const oracle = byLane.body.data.find((d: { group: string }) => d.group === 'svc-oracle');
  expect(oracle).toMatchObject({ requests: 1, errors: 0, tokens_out: 3, estimated_requests: 0 });
  expect(oracle.tokens_in).toBeGreaterThan(0);
  const mid = byLane.body.data.find((d: { group: string }) => d.group === 'mid');
  expect(mid).toMatchObject({ requests: 2, errors: 1, estimated_requests: 1 });
  expect(mid.tokens_out).toBeGreaterThan(0);

  const byKey = await h.req('GET', '/v1/usage?group_by=key', { key: k.apiKey });
  expect(byKey.body.data).toEqual([expect.objectContaining({ group: k.keyId, requests: 3 })]);
  const today = new Date().toISOString().slice(0, 10);
  const byDay = await h.req('GET', `/v1/usage?group_by=day&from=${today}&to=${today}`, { key: k.apiKey });
  expect(byDay.body.data).toEqual([expect.objectContaining({ group: today, requests: 3 })]);
  expect((await h.req('GET', '/v1/usage', { key: stranger.apiKey })).body.data).toEqual([]);

  const bad = await h.req('GET', '/v1/usage?from=2026-13-40&group_by=tenant', { key: k.apiKey });
  expect(bad.status).toBe(400);
  expect(bad.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['query.from', 'query.group_by']);

  const metrics = await h.req('GET', '/v1/metrics');
  expect(metrics.text).toMatch(/svc_chat_requests_total\{lane="mid",status="200"\} \d+/);
  expect(metrics.text).toMatch(/svc_chat_tokens_total\{lane="svc-oracle",direction="out"\} \d+/);
  expect(metrics.text).not.toContain(k.tenantId);
});

test('revocation: DELETE /v1/key refuses the key at once; a revocation made elsewhere (CLI, SQL) is seen through NOTIFY', async () => {
  const a = await h.key(['runtime:chat']);
  expect((await h.req('GET', '/v1/key', { key: a.apiKey })).status).toBe(200); // now cached
  expect((await h.req('DELETE', '/v1/key', { key: a.apiKey })).body).toEqual({ key_id: a.keyId, revoked: true });
  expect((await h.req('GET', '/v1/key', { key: a.apiKey })).status).toBe(401);

  const b = await h.key(['runtime:chat']);
  expect((await h.req('GET', '/v1/key', { key: b.apiKey })).status).toBe(200);
  expect((await h.req('GET', '/v1/key', { key: b.apiKey })).status).toBe(200);
  await revokeKey(h.db, b.keyId); // what `npm run -s keys -- revoke` does, outside this app
  await pollUntil(
    () => h.req('GET', '/v1/key', { key: b.apiKey }),
    (r) => r.status === 401,
    5000,
  );
});

test('a flush asked for while another runs writes what was recorded meanwhile before it resolves', async () => {
  const k = await h.key(['runtime:chat']);
  const g = createGateway({
    config: h.config,
    db: h.db,
    log: pino({ level: 'silent' }),
    temporal: { connection: h.connection, client: h.client },
  });
  try {
    const use = (lane: string) =>
      g.usage.record({
        tenantId: k.tenantId,
        keyId: k.keyId,
        lane,
        error: false,
        tokensIn: 2,
        tokensOut: 1,
        estimated: false,
      });
    use('first');
    const running = g.flush(); // takes 'first' at once
    use('second'); // recorded after that flush took its counts
    const asked = g.flush();
    await asked;
    await running;
    const day = new Date().toISOString().slice(0, 10);
    const rows = await usageReport(h.db, { tenantId: k.tenantId, from: day, to: day, groupBy: 'lane' });
    expect(rows.map((r) => [r.group, Number(r.requests)])).toEqual([
      ['first', 1],
      ['second', 1],
    ]);
  } finally {
    await g.close();
  }
});
