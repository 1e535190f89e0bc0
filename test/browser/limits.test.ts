import { pollUntil } from '../helpers/poll';
import { withBrowser, type BrowserFixture } from './browser-harness';

jest.setTimeout(150_000);

let f: BrowserFixture;
withBrowser(
  { env: { SVC_BROWSER_MAX_SESSIONS_PER_TENANT: '2', SVC_BROWSER_MAX_SESSIONS_PER_WORKER: '3' } },
  (x) => (f = x),
);

test('caps: per tenant and per worker answer 429 with Retry-After; closing one frees a place', async () => {
  const a1 = await f.session();
  await f.session();
  const third = await f.h.req('POST', '/v1/browser/sessions', { key: f.key, body: {} });
  expect(third.status).toBe(429);
  expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(third.body.error).toMatch(/tenant/);

  const b = (await f.h.key(['runtime:workspaces'])).apiKey;
  await f.session(b); // the worker now holds 3: full
  const full = await f.h.req('POST', '/v1/browser/sessions', { key: b, body: {} });
  expect(full.status).toBe(429);
  expect(Number(full.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(full.body.error).toMatch(/capacity/);
  // Nothing half-stored: the refused session is not listed.
  const listed = await f.h.req('GET', '/v1/browser/sessions', { key: b });
  expect(listed.body.data).toHaveLength(1);

  expect((await f.h.req('DELETE', `/v1/browser/sessions/${a1}`, { key: f.key })).status).toBe(200);
  expect(f.bw!.host.sessions.size).toBe(2);
  await f.session(b);
  const health = await f.h.req('GET', '/v1/browser/health', { key: b });
  expect(health.body.sessions_open).toBe(2);
});

test('idle expiry: the workflow timer closes the context; later commands answer 409', async () => {
  const id = await f.session(f.key, { idle_timeout_s: 2 });
  expect((await f.open(id, '/form')).status).toBe(200);
  expect(f.bw!.host.sessions.has(id)).toBe(true);
  const expired = await pollUntil(
    () => f.h.req('GET', `/v1/browser/sessions/${id}`, { key: f.key }),
    (r) => r.body.status === 'expired',
    60_000,
  );
  expect(expired.body.closed_at).not.toBeNull();
  expect(f.bw!.host.sessions.has(id)).toBe(false);
  const r = await f.snapshot(id);
  expect(r.status).toBe(409);
  expect(r.body.error).toMatch(/expired/);
});
