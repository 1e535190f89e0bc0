import { sql } from 'slonik';
import { publishDispatch, publishTokens } from '../../activities/live/publish';
import { startHarness, type Harness } from '../helpers/harness';
import { client, replicas, until, type TestClient } from './ws-helpers';

let h: Harness;
const reps = replicas(() => h);

beforeAll(async () => {
  h = await startHarness();
}, 120_000);
afterAll(async () => {
  await reps.closeAll();
  await h?.close();
});

async function authed(url: string, apiKey: string, session: string): Promise<TestClient> {
  const c = await client(url);
  c.ws.send(JSON.stringify({ type: 'auth', key: apiKey }));
  await until(c.frames, (f) => f.type === 'auth_ok');
  c.ws.send(JSON.stringify({ type: 'subscribe', session }));
  await until(c.frames, (f) => f.type === 'subscribed');
  return c;
}

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
