import pg from 'pg';
import { sql } from 'slonik';
import { publishDispatch, publishTokens } from '../../activities/live/publish';
import { LIVE_CHANNEL } from '../../activities/store/live';
import { startHarness, type Harness } from '../helpers/harness';
import { authed, client, replicas, until, type TestClient } from './ws-helpers';

let h: Harness;
const reps = replicas(() => h);

beforeAll(async () => {
  h = await startHarness();
}, 120_000);
afterAll(async () => {
  await reps.closeAll();
  await h?.close();
});

/** The close code, or 'open' if the socket is still open after `ms` (a bound for a test that fails, not a speed check). */
const closedWithin = (c: TestClient, ms: number) =>
  Promise.race([c.closed, new Promise<'open'>((r) => setTimeout(() => r('open'), ms).unref())]);

const tokenFrames = (c: TestClient) => c.frames.filter((f) => f.type === 'token' || f.type === 'done');

/** After `c` was cut: tokens for its session reach a control socket of the same tenant, and not `c`. */
async function expectNoTokens(c: TestClient, control: TestClient, tenantId: string, session: string) {
  await publishTokens(h.db, { tenantId, session, content: 'secret', done: true });
  await publishDispatch(h.db, 'marker');
  await until(control.frames, (f) => f.type === 'done');
  await until(control.frames, (f) => f.type === 'agent_dispatch');
  expect(tokenFrames(c)).toEqual([]);
}

test('a socket whose key is revoked with DELETE /v1/key gets an error frame and is closed 1008; no token after', async () => {
  const r = await reps.start(); // heartbeat 30 s: only the key notice can close it in time
  const k = await h.key(['runtime:chat']);
  const other = await h.key(['runtime:chat'], { tenantId: k.tenantId });
  const c = await authed(r.ws, k.apiKey, 's1');
  const control = await authed(r.ws, other.apiKey, 's1');

  const res = await fetch(`${r.url}/v1/key`, { method: 'DELETE', headers: { authorization: `Bearer ${k.apiKey}` } });
  expect(res.status).toBe(200);
  expect(await closedWithin(c, 10_000)).toBe(1008);
  expect(c.frames.at(-1)).toEqual({ type: 'error', message: 'The key was revoked or no longer has runtime:chat.' });
  await expectNoTokens(c, control, k.tenantId, 's1');
  control.ws.close();
});

test('a socket whose key loses runtime:chat (plain SQL) is closed 1008; another key of the tenant stays open', async () => {
  const r = await reps.start();
  const k = await h.key(['runtime:chat', 'key']);
  const other = await h.key(['runtime:chat'], { tenantId: k.tenantId });
  const c = await authed(r.ws, k.apiKey, 's2');
  const control = await authed(r.ws, other.apiKey, 's2');

  await h.db.query(sql.unsafe`UPDATE api_keys SET scopes = array_remove(scopes, 'runtime:chat') WHERE id = ${k.keyId}`);
  expect(await closedWithin(c, 10_000)).toBe(1008);
  await expectNoTokens(c, control, k.tenantId, 's2');
  expect(control.ws.readyState).toBe(control.ws.OPEN);
  control.ws.close();
});

test('with the key notice missed (trigger off), the heartbeat re-check still closes the socket', async () => {
  const r = await reps.start({ heartbeatMs: 200 });
  const k = await h.key(['runtime:chat']);
  const c = await authed(r.ws, k.apiKey, 's3');
  await h.db.query(sql.unsafe`ALTER TABLE api_keys DISABLE TRIGGER api_keys_gateway_notify`);
  try {
    await h.db.query(sql.unsafe`UPDATE api_keys SET revoked_at = now() WHERE id = ${k.keyId}`);
  } finally {
    await h.db.query(sql.unsafe`ALTER TABLE api_keys ENABLE TRIGGER api_keys_gateway_notify`);
  }
  expect(await closedWithin(c, 10_000)).toBe(1008);
});

/** A LISTEN connection on the live channel in the test: counts the `sub` notices naming (tenant, session). */
async function subNotices(tenantId: string, session: string) {
  const l = new pg.Client({ connectionString: h.config.databaseUrl });
  await l.connect();
  const state = { subs: 0, markers: 0 };
  l.on('notification', (n) => {
    const p = JSON.parse(n.payload ?? '{}');
    if (p.kind === 'sub' && p.subs.some((x: string[]) => x[0] === tenantId && x[1] === session)) state.subs++;
    if (p.kind === 'dispatch' && p.id === 'marker') state.markers++;
  });
  await l.query(`LISTEN ${LIVE_CHANNEL}`);
  return {
    state,
    /** Every notice committed before this call has been received once it resolves (one connection, commit order). */
    async settle() {
      const before = state.markers;
      await publishDispatch(h.db, 'marker');
      await until([state], (s) => s.markers > before);
    },
    close: () => l.end(),
  };
}

test('duplicate subscribes are answered `subscribed` with no further NOTIFY: one `sub` notice for 30 of them', async () => {
  const r = await reps.start({ announceMs: 600_000 }); // no periodic re-announce during the test
  const k = await h.key(['runtime:chat']);
  const listen = await subNotices(k.tenantId, 'dup');
  const c = await client(r.ws);
  c.ws.send(JSON.stringify({ type: 'auth', key: k.apiKey }));
  await until(c.frames, (f) => f.type === 'auth_ok');
  for (let i = 0; i < 30; i++) c.ws.send(JSON.stringify({ type: 'subscribe', session: 'dup' }));
  await until(c.frames, () => c.frames.filter((f) => f.type === 'subscribed').length === 30);
  await listen.settle();
  expect(listen.state.subs).toBe(1);
  expect(c.ws.readyState).toBe(c.ws.OPEN);
  c.ws.close();
  await listen.close();
});

test('1,000 subscribe messages at once: the socket is closed 1008 for flooding, with at most one `sub` notice', async () => {
  const r = await reps.start({ announceMs: 600_000 });
  const k = await h.key(['runtime:chat']);
  const listen = await subNotices(k.tenantId, 'flood');
  const c = await client(r.ws);
  c.ws.send(JSON.stringify({ type: 'auth', key: k.apiKey }));
  await until(c.frames, (f) => f.type === 'auth_ok');
  for (let i = 0; i < 1000; i++) c.ws.send(JSON.stringify({ type: 'subscribe', session: 'flood' }));
  expect(await closedWithin(c, 10_000)).toBe(1008);
  expect(c.frames.some((f) => f.type === 'error' && /Too many messages/.test(f.message))).toBe(true);
  await listen.settle();
  expect(listen.state.subs).toBeLessThanOrEqual(1);
  await listen.close();
});

test('failed auth messages: the fifth closes the socket 1008; the ones after it are not handled', async () => {
  const r = await reps.start();
  const c = await client(r.ws);
  for (let i = 0; i < 10; i++)
    c.ws.send(JSON.stringify({ type: 'auth', key: `svc.aaaaaaaaaaa${i}.${'b'.repeat(32)}` }));
  expect(await closedWithin(c, 10_000)).toBe(1008);
  expect(c.frames.filter((f) => f.type === 'error' && /Invalid key/.test(f.message))).toHaveLength(5);
});
