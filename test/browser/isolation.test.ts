import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'slonik';
import { pollUntil } from '../helpers/poll';
import { refOf, withBrowser, type BrowserFixture } from './browser-harness';

jest.setTimeout(150_000);

let f: BrowserFixture;
withBrowser({ env: { SVC_STATE_KEY: 'test-state-key-0123456789' } }, (x) => (f = x));

/** A second loopback server that is NOT allow-listed: any hit on it means the guard leaked. */
let secret: { url: string; hits: string[]; close(): Promise<void> };
beforeAll(async () => {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    res.end('secret');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  secret = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
});
afterAll(() => secret.close());

test('4 parallel sessions of 2 tenants on one page: no cookie or localStorage bleed', async () => {
  const b = await f.h.key(['runtime:workspaces']);
  const owners = [f.key, f.key, b.apiKey, b.apiKey];
  const ids = await Promise.all(owners.map((k) => f.session(k)));
  await Promise.all(ids.map((id, i) => f.open(id, `/tag?v=s${i}`, owners[i])));
  const seen = await Promise.all(
    ids.map(async (id, i) => {
      await f.open(id, '/who', owners[i]);
      await f.act(id, { action: 'wait_for', text: 'cookie[' }, owners[i]);
      return (await f.snapshot(id, owners[i])).body.text as string;
    }),
  );
  seen.forEach((text, i) => expect(text).toContain(`cookie[who=s${i}] ls[s${i}]`));
});

test('state save → new session → load → logged in (cookies, localStorage, IndexedDB); encrypted at rest; other tenant 404', async () => {
  const a = await f.session();
  await f.open(a, '/login');
  await f.act(a, { action: 'click', ref: refOf((await f.snapshot(a)).body.text, /button "Log in"/) });
  await f.act(a, { action: 'wait_for', text: 'in' });
  const saved = await f.h.req('POST', '/v1/browser/state/save', {
    key: f.key,
    body: { session_id: a, name: 'logged-in' },
  });
  expect(saved.status).toBe(200);
  expect(saved.body).toMatchObject({ name: 'logged-in', encrypted: true, cookies: 1 });
  expect(saved.body.origins).toBeGreaterThanOrEqual(1);

  // At rest: sealed with AES-GCM, no token in clear.
  const stored = await f.h.db.oneFirst(sql.unsafe`SELECT state FROM browser_states WHERE id = ${saved.body.id}`);
  expect(String(stored)).toMatch(/^gcm1:/);
  expect(String(stored)).not.toContain('t-123');
  const cp = await pollUntil(
    () => f.h.db.maybeOneFirst(sql.unsafe`SELECT checkpoint FROM browser_sessions WHERE id = ${a}`),
    (c) => c !== null,
  );
  expect(String(cp)).toMatch(/^gcm1:/);

  const b = await f.session();
  await f.open(b, '/account');
  await f.act(b, { action: 'wait_for', text: 'account cookie' });
  expect((await f.snapshot(b)).body.text).toContain('account cookie:no ls:none idb:none');
  const loaded = await f.h.req('POST', '/v1/browser/state/load', {
    key: f.key,
    body: { session_id: b, name: 'logged-in' },
  });
  expect(loaded.status).toBe(200);
  await f.act(b, { action: 'wait_for', text: 'account cookie:yes' });
  expect((await f.snapshot(b)).body.text).toContain('account cookie:yes ls:t-123 idb:idb-ok');

  // A new session can also start from the state.
  const c = await f.session(f.key, { state: 'logged-in' });
  await f.open(c, '/account');
  await f.act(c, { action: 'wait_for', text: 'account cookie:yes' });
  expect((await f.snapshot(c)).body.text).toContain('account cookie:yes ls:t-123 idb:idb-ok');

  const other = await f.h.key(['runtime:workspaces']);
  const theirs = await f.session(other.apiKey);
  expect(
    (
      await f.h.req('POST', '/v1/browser/state/load', {
        key: other.apiKey,
        body: { session_id: theirs, name: 'logged-in' },
      })
    ).status,
  ).toBe(404);
  expect(
    (
      await f.h.req('POST', '/v1/browser/state/load', {
        key: other.apiKey,
        body: { session_id: theirs, state_id: saved.body.id },
      })
    ).status,
  ).toBe(404);
  expect(
    (await f.h.req('POST', '/v1/browser/sessions', { key: other.apiKey, body: { state: saved.body.id } })).status,
  ).toBe(404);
});

test('SSRF: navigation to a private address, file:, data:, chrome: and a redirect to a private address are refused', async () => {
  const id = await f.session();
  const refused = async (url: string) => {
    const r = await f.h.req('POST', '/v1/browser/open', { key: f.key, body: { session_id: id, url } });
    expect({ url, status: r.status }).toEqual({ url, status: 400 });
    expect(r.body.error).toMatch(/Refused/);
  };
  await refused(`${secret.url}/direct`);
  await refused('http://169.254.169.254/latest/meta-data/');
  await refused('http://localhost:1/');
  await refused('file:///etc/passwd');
  await refused('data:text/html,<h1>x</h1>');
  await refused('chrome://version');
  await refused(`${f.pages.url}/redirect?to=${encodeURIComponent(`${secret.url}/via-redirect`)}`);
  expect(secret.hits).toEqual([]);
  // The session is still usable.
  expect((await f.open(id, '/form')).status).toBe(200);
});

test('SSRF: a page whose image points at a private address loads, the image request is refused and reported', async () => {
  const id = await f.session();
  const r = await f.open(id, `/img?src=${encodeURIComponent(`${secret.url}/pixel.png`)}`);
  expect(r.status).toBe(200);
  expect(r.body.title).toBe('T');
  expect(r.body.blocked).toEqual([
    expect.objectContaining({ url: `${secret.url}/pixel.png`, reason: expect.stringMatching(/private/) }),
  ]);
  const meta = await f.open(id, `/img?src=${encodeURIComponent('http://169.254.169.254/latest/meta-data/')}`);
  expect(meta.body.blocked[0].url).toContain('169.254.169.254');
  expect(secret.hits).toEqual([]);
});
