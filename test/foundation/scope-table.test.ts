import { revokeKey } from '../../activities/store/keys';
import { allRoutes } from '../../api/routes';
import { SCOPES } from '../../schema/auth';
import { pollUntil } from '../helpers/poll';
import { startHarness, type Harness } from '../helpers/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.close());

/** A concrete path for a route template (`:id` → a made-up id). */
const concrete = (p: string) => p.replace(/:([A-Za-z_]+)/g, 'x_unknown');

describe('route → scope table', () => {
  const routes = allRoutes();

  test('every route declares its access, and scoped routes name a known scope', () => {
    expect(routes.length).toBeGreaterThan(5);
    for (const r of routes) {
      const a = r.access;
      const ok =
        a === 'public' ||
        a === 'key' ||
        a === 'token' ||
        a === 'bootstrap' ||
        (typeof a === 'object' && (SCOPES as readonly string[]).includes(a.scope));
      expect({ route: `${r.method} ${r.path}`, ok }).toEqual({ route: `${r.method} ${r.path}`, ok: true });
    }
    const keys = routes.map((r) => `${r.method} ${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  test('every non-public route answers 401 without a key (and with a malformed one)', async () => {
    for (const r of routes.filter((x) => x.access !== 'public')) {
      for (const key of [undefined, 'svc.garbage']) {
        const res = await h.req(r.method.toUpperCase(), concrete(r.path), {
          key,
          body: r.method === 'get' || r.method === 'delete' ? undefined : {},
        });
        expect({ route: `${r.method} ${r.path}`, status: res.status }).toEqual({
          route: `${r.method} ${r.path}`,
          status: 401,
        });
        expect(typeof res.body.error).toBe('string');
      }
    }
  });

  test('a key without the route scope gets 403 naming the scope; a bootstrap key gets 403', async () => {
    const none = await h.key(['runtime:unrelated']);
    const boot = await h.key(['bootstrap:app:home'], { kind: 'bootstrap' });
    for (const r of routes.filter((x) => typeof x.access === 'object')) {
      const scope = (r.access as { scope: string }).scope;
      const body = r.method === 'get' || r.method === 'delete' ? undefined : {};
      const res = await h.req(r.method.toUpperCase(), concrete(r.path), { key: none.apiKey, body });
      expect({ route: r.path, status: res.status, scope: res.body.scope }).toEqual({
        route: r.path,
        status: 403,
        scope,
      });
      const b = await h.req(r.method.toUpperCase(), concrete(r.path), { key: boot.apiKey, body });
      expect({ route: r.path, status: b.status }).toEqual({ route: r.path, status: 403 });
    }
  });

  test('GET /v1/key describes the key; legacy keys are accepted; revoked keys are not', async () => {
    const k = await h.key(['runtime:chat', 'runtime:records']);
    const r = await h.req('GET', '/v1/key', { key: k.apiKey });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      key_id: k.keyId,
      tenant_id: k.tenantId,
      kind: 'runtime',
      app: null,
      scopes: ['runtime:chat', 'runtime:records'],
      limits: { key: null, tenant: null },
    });
    expect(JSON.stringify(r.body)).not.toContain(k.apiKey.split('.')[2]);
    const legacy = await h.key(['runtime:chat'], { kind: 'legacy' });
    expect((await h.req('GET', '/v1/key', { key: legacy.apiKey })).body.kind).toBe('legacy');
    const boot = await h.key(['bootstrap:app:home'], { kind: 'bootstrap' });
    expect((await h.req('GET', '/v1/key', { key: boot.apiKey })).status).toBe(403);
    await revokeKey(h.db, legacy.keyId);
    // Revoked outside the app: its cached key is dropped on the NOTIFY, milliseconds later.
    await pollUntil(
      () => h.req('GET', '/v1/key', { key: legacy.apiKey }),
      (res) => res.status === 401,
      5000,
    );
  });
});
