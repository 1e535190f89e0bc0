import { sql } from 'slonik';
import { z } from 'zod';
import { listKeys } from '../../activities/store/keys';
import { startHarness, type Harness } from '../helpers/harness';

/**
 * The status of `call` once it is 401, or its last status after the documented revocation bound (1 s):
 * a key revoked outside the process (plain SQL, as another replica would) reaches the key cache by NOTIFY.
 */
async function statusWithinRevocationBound(call: () => Promise<number>): Promise<number> {
  const deadline = Date.now() + 1000;
  let status = 0;
  do {
    status = await call();
    if (status !== 401) await new Promise((r) => setTimeout(r, 50));
  } while (status !== 401 && Date.now() < deadline);
  return status;
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.close());

const TOKEN = 'test-registration-token';

describe('POST /v1/app/register', () => {
  test('mints a home key in a new tenant with the home scopes', async () => {
    const r = await h.req('POST', '/v1/app/register', {
      headers: { 'X-Registration-Token': TOKEN },
      body: { app_name: 'home', device_id: 'd1' },
    });
    expect(r.status).toBe(200);
    expect(r.body.api_key).toMatch(/^svc\.[0-9a-z]{12}\.[0-9a-z]{32}$/);
    expect(r.body.app).toBe('home');
    expect(r.body.scopes.sort()).toEqual(['runtime:chat', 'runtime:models', 'runtime:spaces', 'runtime:workspaces']);
    expect(r.body.tenant_id).toMatch(/^ten_/);
    // The secret is stored only as a hash.
    const stored = await h.db.one(sql.type(z.object({ secret_hash: z.string(), device_id: z.string() }))`
      SELECT secret_hash, device_id FROM api_keys WHERE id = ${r.body.key_id}`);
    expect(stored.secret_hash).not.toContain(r.body.api_key.split('.')[2]);
    expect(stored.device_id).toBe('d1');
    // The minted key works on a scoped route of its tenant...
    const spaces = await h.req('GET', '/v1/spaces', { key: r.body.api_key });
    expect(spaces.status).toBe(200);
    const me = await h.req('GET', '/v1/key', { key: r.body.api_key });
    expect(me.body).toMatchObject({ key_id: r.body.key_id, tenant_id: r.body.tenant_id, app: 'home' });
    // ...and, being a runtime key, not as a bootstrap key.
    const notBootstrap = await h.req('POST', '/v1/agent/register', { key: r.body.api_key, body: { app_name: 'home' } });
    expect(notBootstrap.status).toBe(401);
    expect(notBootstrap.body.error).toMatch(/needs a bootstrap key/);
  });

  test('studio gets chat+models; token also accepted as Bearer; existing tenant reused', async () => {
    const first = await h.req('POST', '/v1/app/register', {
      headers: { authorization: `Bearer ${TOKEN}` },
      body: { app_name: 'Studio' },
    });
    expect(first.status).toBe(200);
    expect(first.body.scopes.sort()).toEqual(['runtime:chat', 'runtime:models']);
    const second = await h.req('POST', '/v1/app/register', {
      headers: { 'X-Registration-Token': TOKEN },
      body: { app_name: 'dev', tenant: first.body.tenant_id },
    });
    expect(second.status).toBe(200);
    expect(second.body.tenant_id).toBe(first.body.tenant_id);
  });

  test('unknown tenant 404, unapproved app 403, missing or wrong token 401, bad body 400', async () => {
    const headers = { 'X-Registration-Token': TOKEN };
    expect(
      (await h.req('POST', '/v1/app/register', { headers, body: { app_name: 'home', tenant: 'ten_nope' } })).status,
    ).toBe(404);
    const forbidden = await h.req('POST', '/v1/app/register', { headers, body: { app_name: 'toaster' } });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toMatch(/toaster/);
    expect((await h.req('POST', '/v1/app/register', { body: { app_name: 'home' } })).status).toBe(401);
    expect(
      (
        await h.req('POST', '/v1/app/register', {
          headers: { 'X-Registration-Token': 'wrong' },
          body: { app_name: 'home' },
        })
      ).status,
    ).toBe(401);
    const bad = await h.req('POST', '/v1/app/register', { headers, body: { device_id: 3 } });
    expect(bad.status).toBe(400);
    expect(bad.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['body.app_name', 'body.device_id']);
  });
});

describe('app names that are Object.prototype members', () => {
  const tenants = () => h.db.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM tenants`);

  test.each(['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', 'isPrototypeOf'])(
    'POST /v1/app/register with app_name %p is 403 like any unknown app, and creates no tenant',
    async (name) => {
      const before = await tenants();
      const r = await h.req('POST', '/v1/app/register', {
        headers: { 'X-Registration-Token': TOKEN },
        body: { app_name: name },
      });
      expect({ status: r.status, code: r.body.code }).toEqual({ status: 403, code: 'forbidden' });
      expect(await tenants()).toBe(before);
    },
  );

  test('POST /v1/agent/register for app "constructor" mints a key with the base scopes (not a 500)', async () => {
    const boot = await h.key(['bootstrap:app:constructor'], { kind: 'bootstrap' });
    const r = await h.req('POST', '/v1/agent/register', { key: boot.apiKey, body: { app_name: 'constructor' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ app: 'constructor', tenant_id: boot.tenantId });
    expect(r.body.scopes.sort()).toEqual(['runtime:chat', 'runtime:models']);
  });
});

describe('registration disabled', () => {
  let h2: Harness;
  beforeAll(async () => {
    h2 = await startHarness({ env: { SVC_REGISTRATION_TOKEN: '' } });
  });
  afterAll(async () => h2?.close());
  test('is always 401 when no registration token is configured', async () => {
    const r = await h2.req('POST', '/v1/app/register', {
      headers: { 'X-Registration-Token': '' },
      body: { app_name: 'home' },
    });
    expect(r.status).toBe(401);
    expect(r.body.error).toMatch(/disabled/);
  });
});

describe('bootstrap keys and POST /v1/agent/register', () => {
  test('mints for the named app in the bootstrap tenant, 403 for another app', async () => {
    const boot = await h.key(['bootstrap:app:studio'], { kind: 'bootstrap' });
    expect(boot.apiKey).toMatch(/^agb\./);
    const ok = await h.req('POST', '/v1/agent/register', {
      key: boot.apiKey,
      body: { app_name: 'Studio', device_id: 'ci' },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.tenant_id).toBe(boot.tenantId);
    expect(ok.body.scopes.sort()).toEqual(['runtime:chat', 'runtime:models']);
    const other = await h.req('POST', '/v1/agent/register', { key: boot.apiKey, body: { app_name: 'home' } });
    expect(other.status).toBe(403);
    expect(other.body.scope).toBe('bootstrap:app:home');
  });

  test('a bootstrap key is refused everywhere else with 403', async () => {
    // The key also carries runtime scopes, so only the bootstrap rule (not a missing scope) refuses it.
    const boot = await h.key(
      ['bootstrap:app:home', 'runtime:chat', 'runtime:models', 'runtime:spaces', 'runtime:records'],
      { kind: 'bootstrap' },
    );
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/v1/spaces'],
      ['GET', '/v1/models'],
      ['GET', '/v1/sessions'],
      ['GET', '/v1/pad/stats'],
      ['GET', '/v1/key'],
      ['POST', '/v1/chat/completions', { messages: [{ role: 'user', content: 'x' }] }],
      ['POST', '/v1/spaces', { name: 'x' }],
    ];
    for (const [method, path, body] of routes) {
      const r = await h.req(method, path, { key: boot.apiKey, body });
      expect({ path, status: r.status, code: r.body.code }).toEqual({ path, status: 403, code: 'forbidden' });
      expect(r.body.error).toMatch(/Bootstrap keys can only mint/);
    }
    // Public routes do not look at the key at all.
    expect((await h.req('GET', '/v1/openapi.json', { key: boot.apiKey })).status).toBe(200);
    // And the key still does its one job.
    expect((await h.req('POST', '/v1/agent/register', { key: boot.apiKey, body: { app_name: 'home' } })).status).toBe(
      200,
    );
  });

  test('missing or invalid bootstrap key is 401', async () => {
    expect((await h.req('POST', '/v1/agent/register', { body: { app_name: 'home' } })).status).toBe(401);
    expect(
      (
        await h.req('POST', '/v1/agent/register', {
          key: 'agb.abcdefghjkmn.' + 'x'.repeat(32),
          body: { app_name: 'home' },
        })
      ).status,
    ).toBe(401);
  });
});

describe('revocation, legacy keys and last_used_at', () => {
  test('a revoked key is 401; last_used_at is recorded for the key that was used', async () => {
    const boot = await h.key(['bootstrap:app:dev'], { kind: 'bootstrap' });
    const unused = await h.key(['bootstrap:app:dev'], { kind: 'bootstrap', tenantId: boot.tenantId });
    const mint = await h.req('POST', '/v1/agent/register', { key: boot.apiKey, body: { app_name: 'dev' } });
    expect(mint.status).toBe(200);
    const keys = await listKeys(h.db, { tenantId: boot.tenantId });
    const used = keys.find((k) => k.key_id === boot.keyId);
    expect(used).toBeDefined();
    expect(used!.last_used_at).not.toBeNull();
    expect(keys.find((k) => k.key_id === unused.keyId)).toMatchObject({ last_used_at: null });
    expect(JSON.stringify(keys)).not.toMatch(/secret|hash/);
    // Revoked outside this process (plain SQL, as another replica would): the NOTIFY reaches the key
    // cache within the documented 1 s, so the key is refused within that bound, not necessarily at once.
    await h.db.query(sql.unsafe`UPDATE api_keys SET revoked_at = now() WHERE id = ${boot.keyId}`);
    expect(
      await statusWithinRevocationBound(
        async () => (await h.req('POST', '/v1/agent/register', { key: boot.apiKey, body: { app_name: 'dev' } })).status,
      ),
    ).toBe(401);
  });

  test('a legacy key works on scoped routes until revoked, and only within its scopes', async () => {
    const legacy = await h.key(['runtime:chat'], { kind: 'legacy' });
    expect(legacy.apiKey).toMatch(/^legacy\./);
    const sessions = await h.req('GET', '/v1/sessions', { key: legacy.apiKey });
    expect(sessions.status).toBe(200);
    const me = await h.req('GET', '/v1/key', { key: legacy.apiKey });
    expect(me.body).toMatchObject({ key_id: legacy.keyId, tenant_id: legacy.tenantId, kind: 'legacy' });
    const spaces = await h.req('GET', '/v1/spaces', { key: legacy.apiKey });
    expect({ status: spaces.status, scope: spaces.body.scope }).toEqual({ status: 403, scope: 'runtime:spaces' });
    // Revoked outside this process, as above: refused within the documented 1 s.
    await h.db.query(sql.unsafe`UPDATE api_keys SET revoked_at = now() WHERE id = ${legacy.keyId}`);
    expect(
      await statusWithinRevocationBound(
        async () => (await h.req('GET', '/v1/sessions', { key: legacy.apiKey })).status,
      ),
    ).toBe(401);
  });
});
