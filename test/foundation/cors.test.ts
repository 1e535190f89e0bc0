import { parseConfig } from '../../schema/config';
import { startExtraApp } from '../helpers/extra-app';
import { startHarness, type Harness } from '../helpers/harness';

/** CORS for browser clients (SVC_CORS_ORIGINS): preflights, headers on every answer, nothing when unset. */
let h: Harness;
let key: string;
const APP = 'https://app.example';

beforeAll(async () => {
  h = await startHarness({ env: { SVC_CORS_ORIGINS: `${APP}, http://localhost:5173` } });
  key = (await h.key(['runtime:chat'])).apiKey;
});
afterAll(() => h?.close());

const preflight = (url: string, origin: string, headers = 'authorization, content-type') =>
  fetch(url, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': headers },
  });

test('an allowed origin’s preflight is 204 without a key, with the methods and the headers it asked for', async () => {
  const res = await preflight(`${h.url}/v1/chat/completions`, APP, 'authorization, content-type, x-session-id');
  expect(res.status).toBe(204);
  expect(res.headers.get('access-control-allow-origin')).toBe(APP);
  expect(res.headers.get('vary')).toBe('Origin');
  expect(res.headers.get('access-control-allow-methods')).toBe('GET, POST, PUT, PATCH, DELETE');
  expect(res.headers.get('access-control-allow-headers')).toBe('authorization, content-type, x-session-id');
  expect(res.headers.get('access-control-max-age')).toBe('600');
  expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  // A header list that is not a list of names is not echoed.
  const odd = await preflight(`${h.url}/v1/chat/completions`, APP, 'x-a; b=(c)');
  expect(odd.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type');
});

test('answers to an allowed origin carry CORS headers: success, 401, the fast path, a stream route', async () => {
  const ok = await fetch(`${h.url}/v1/health`, { headers: { origin: 'http://localhost:5173' } });
  expect(ok.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
  expect(ok.headers.get('access-control-expose-headers')).toContain('X-Request-Id');
  const denied = await fetch(`${h.url}/v1/sessions`, { headers: { origin: APP } });
  expect(denied.status).toBe(401);
  expect(denied.headers.get('access-control-allow-origin')).toBe(APP);
  const chat = await fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { origin: APP, authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(chat.headers.get('access-control-allow-origin')).toBe(APP);
  expect(chat.headers.get('access-control-expose-headers')).toContain('x-ratelimit-remaining-requests');
});

test('another origin gets no CORS header, and its preflight is not approved', async () => {
  const res = await fetch(`${h.url}/v1/health`, { headers: { origin: 'https://evil.example' } });
  expect(res.status).toBe(200);
  expect(res.headers.get('access-control-allow-origin')).toBeNull();
  const pre = await preflight(`${h.url}/v1/chat/completions`, 'https://evil.example');
  expect(pre.headers.get('access-control-allow-origin')).toBeNull();
  expect(pre.headers.get('access-control-allow-methods')).toBeNull();
  // The same origin spelled in upper case is the same origin.
  const upper = await fetch(`${h.url}/v1/health`, { headers: { origin: 'HTTPS://APP.EXAMPLE' } });
  expect(upper.headers.get('access-control-allow-origin')).toBe('HTTPS://APP.EXAMPLE');
});

test('"*" allows any origin without Vary; unset sends no CORS header at all', async () => {
  const any = await startExtraApp(h, { config: { http: { ...h.config.http, corsOrigins: '*' } } });
  const off = await startExtraApp(h, { config: { http: { ...h.config.http, corsOrigins: [] } } });
  try {
    const res = await fetch(`${any.url}/v1/health`, { headers: { origin: 'https://anywhere.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('vary')).toBeNull();
    const none = await fetch(`${off.url}/v1/health`, { headers: { origin: APP } });
    expect(none.headers.get('access-control-allow-origin')).toBeNull();
    const pre = await preflight(`${off.url}/v1/chat/completions`, APP);
    expect(pre.status).not.toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
  } finally {
    await any.close();
    await off.close();
  }
});

test('SVC_CORS_ORIGINS: origins only (no path, no wildcard host), else the config is refused naming it', () => {
  expect(parseConfig({ SVC_CORS_ORIGINS: 'https://a.example:8443,http://[::1]:3000' }).http.corsOrigins).toEqual([
    'https://a.example:8443',
    'http://[::1]:3000',
  ]);
  expect(parseConfig({}).http.corsOrigins).toEqual([]);
  for (const bad of ['https://a.example/app', 'https://*.example', 'a.example'])
    expect(() => parseConfig({ SVC_CORS_ORIGINS: bad })).toThrow(/SVC_CORS_ORIGINS/);
});
