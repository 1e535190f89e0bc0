import { allRoutes } from '../../api/routes';
import { APP_SCOPES } from '../../schema/auth';
import { startHarness, type Harness } from '../helpers/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.close());

const TOKEN = 'test-registration-token';

/** Routes the spec lists as "key required" with no scope named: every first-party app must reach them. */
const KEY_REQUIRED = [
  'post /v1/tasks',
  'get /v1/tasks',
  'get /v1/tasks/:id',
  'patch /v1/tasks/:id',
  'delete /v1/tasks/:id',
  'post /v1/tasks/:id/steps',
  'patch /v1/tasks/:id/steps/:step_id',
  'delete /v1/tasks/:id/steps/:step_id',
  'post /v1/tasks/:id/execute',
  'get /v1/tasks/:id/execute',
  'post /v1/entities',
  'get /v1/entities',
  'get /v1/entities/:id',
  'post /v1/entities/:id/events',
  'post /v1/pad/dispatch',
  'get /v1/pad/sessions',
  'get /v1/pad/sessions/:id',
  'get /v1/pad/stats',
  'post /v1/sovereign/goals',
  'get /v1/sovereign/goals',
  'get /v1/sovereign/goals/:id',
  'post /v1/sovereign/goals/:id/tick',
  'delete /v1/sovereign/goals/:id',
  'post /v1/swarm/run',
  'get /v1/goals',
  'post /v1/goals',
  'get /v1/goals/:id',
  'put /v1/goals/:id',
  'delete /v1/goals/:id',
  'get /v1/memories',
  'get /v1/memories/knowledge',
  'post /v1/ingest',
  'post /v1/ingest/web',
  'post /v1/documents/upload',
  'get /v1/documents',
  'post /v1/share',
  'get /v1/shares',
  'post /v1/enterprise/learn',
  'get /v1/enterprise/learn/:job_id',
  'get /v1/enterprise/knowledge/search',
  // Goals, memory, documents, sharing, tools, workspaces (key required): the rest of the table. Image generation
  // and agent drafting are model calls, which keep runtime:chat (docs/decisions.md); every first-party app holds it.
  'get /v1/tools',
  'post /v1/tools/plan',
  'post /v1/tools/execute-plan',
  'get /v1/daemons',
  'get /v1/sovereign/identity',
  'put /v1/sovereign/identity',
  // Utility model lanes (key required; chat completions and model lists, which every app's scopes cover).
  'get /v1/slm/models',
  'post /v1/slm/chat/completions',
  'get /v1/slm/commons/tools',
  'post /v1/slm/commons/completions',
  'get /v1/cloud/models',
  'post /v1/micro/chat/completions',
  'post /v1/mid/chat/completions',
  // Structured reasoning (key required): all 23.
  ...[
    'learning/mastery/compile',
    'quest/scaffold',
    'behavior/create',
    'context/momentum',
    'procedure/compile',
    'workflow/grammar/compile',
    'actions/plan',
    'conversation/harvest',
    'temporal/coordinate',
    'ambient/continuity/compile',
    'anticipation/prepare',
    'codebase/task/plan',
    'continuity/recover',
    'execution/orchestrate',
    'workgraph/compile',
    'workgraph/answer',
    'contextual-action/plan',
    'signals/opportunities',
    'intent/timeline',
    'procedural/crystallize',
    'memory/semantic/graph',
    'resources/commitment/reason',
    'ambient/intent/suggest',
  ].map((p) => `post /v1/${p}`),
];

/** Spec'd routes with a named scope, reachable only by apps granted it. */
const SCOPED: Record<string, string> = {
  'post /v1/chat/completions': 'runtime:chat',
  'post /v1/images/generations': 'runtime:chat',
  'post /v1/agents/vibe': 'runtime:chat',
  'post /v1/chat/feedback': 'runtime:chat',
  'get /v1/models': 'runtime:models',
  'get /v1/spaces': 'runtime:spaces',
  'post /v1/spaces': 'runtime:spaces',
  'delete /v1/spaces/:id': 'runtime:spaces',
  'post /v1/spaces/:id/documents': 'runtime:spaces',
  'get /v1/spaces/:id/documents': 'runtime:spaces',
};

const concrete = (p: string) => p.replace(/:([A-Za-z_]+)/g, 'x_unknown');

async function register(app: string): Promise<{ api_key: string; tenant_id: string; scopes: string[] }> {
  const r = await h.req('POST', '/v1/app/register', {
    headers: { 'X-Registration-Token': TOKEN },
    body: { app_name: app, device_id: `${app}-device` },
  });
  expect(r.status).toBe(200);
  return r.body;
}

/** Calls a route with an empty body (a malformed request for most POSTs) and an unknown id. */
async function call(route: string, key: string) {
  const [method, path] = route.split(' ');
  const body = method === 'get' || method === 'delete' ? undefined : {};
  return h.req(method.toUpperCase(), concrete(path), { key, body });
}

test("every spec'd route is in the route table", () => {
  const table = new Set(allRoutes().map((r) => `${r.method} ${r.path}`));
  for (const route of [...KEY_REQUIRED, ...Object.keys(SCOPED), 'delete /v1/enterprise/knowledge']) {
    expect({ route, present: table.has(route) }).toEqual({ route, present: true });
  }
});

describe.each(Object.keys(APP_SCOPES))('first-party app %s', (app) => {
  let key: string;
  let scopes: string[];
  beforeAll(async () => {
    const minted = await register(app);
    key = minted.api_key;
    scopes = minted.scopes;
  });

  test('reaches every "key required" route (never 401/403, never 5xx)', async () => {
    for (const route of KEY_REQUIRED) {
      const r = await call(route, key);
      expect({ route, refused: r.status === 401 || r.status === 403, server: r.status >= 500 }).toEqual({
        route,
        refused: false,
        server: false,
      });
    }
  });

  test('reaches every browser route ("key required"): never 401/403', async () => {
    // No browser worker runs here: a route may answer 4xx for the empty body or the unknown session, or 503.
    const browser = allRoutes().filter((r) => r.path.startsWith('/v1/browser'));
    expect(browser.length).toBeGreaterThanOrEqual(9);
    for (const { method, path } of browser) {
      // An empty body would open a session and wait for a worker: an invalid one is answered at once, after the key.
      const r =
        method === 'post' && path === '/v1/browser/sessions'
          ? await h.req('POST', path, { key, body: { viewport: 'wide' } })
          : await call(`${method} ${path}`, key);
      expect({ path, method, refused: r.status === 401 || r.status === 403 }).toEqual({ path, method, refused: false });
    }
  });

  test('reaches the scoped routes its scopes grant and gets 403 naming the scope on the others', async () => {
    for (const [route, scope] of Object.entries(SCOPED)) {
      const r = await call(route, key);
      if (scopes.includes(scope))
        expect({ route, status: r.status === 401 || r.status === 403 ? r.status : 'ok' }).toEqual({
          route,
          status: 'ok',
        });
      else expect({ route, status: r.status, scope: r.body.scope }).toEqual({ route, status: 403, scope });
    }
  });

  test('creates and reads back its own task and entity', async () => {
    const task = await h.req('POST', '/v1/tasks', {
      key,
      body: { title: `${app} task`, surface: app === 'home' ? 'home' : 'studio' },
    });
    expect(task.status).toBe(201);
    expect((await h.req('GET', `/v1/tasks/${task.body.id}`, { key })).body.title).toBe(`${app} task`);
    const entity = await h.req('POST', '/v1/entities', { key, body: { name: `${app} entity`, kind: 'business' } });
    expect(entity.status).toBeLessThan(300);
    const list = await h.req('GET', '/v1/entities', { key });
    expect(list.body.data.map((e: { name: string }) => e.name)).toContain(`${app} entity`);
  });
});

test('a runtime key of any scope reaches every "key required" route (never 401/403)', async () => {
  // The scope this key holds guards nothing on these routes: any runtime key of the tenant is enough. The utility
  // lanes are left out: they are chat completions and model lists, which keep runtime:chat and runtime:models.
  const key = (await h.key(['runtime:email:send'])).apiKey;
  for (const route of KEY_REQUIRED.filter(
    (r) => !r.includes('/slm/') && !r.includes('/micro/') && !r.includes('/mid/') && !r.includes('/cloud/'),
  )) {
    const r = await call(route, key);
    expect({ route, refused: r.status === 401 || r.status === 403 }).toEqual({ route, refused: false });
  }
});

test('runtime:records now means bulk record administration: wiping enterprise knowledge', async () => {
  const home = await register('home');
  const refused = await h.req('DELETE', '/v1/enterprise/knowledge', { key: home.api_key });
  expect([refused.status, refused.body.scope]).toEqual([403, 'runtime:records']);
  const admin = await h.key(['runtime:records'], { tenantId: home.tenant_id });
  const wipe = await h.req('DELETE', '/v1/enterprise/knowledge', { key: admin.apiKey });
  expect(wipe.status).toBe(200);
  expect(wipe.body).toEqual({ deleted_documents: 0, deleted_chunks: 0 });
  // The records scope is not needed anywhere else among the spec'd routes.
  const needsRecords = allRoutes()
    .filter((r) => typeof r.access === 'object' && r.access.scope === 'runtime:records')
    .map((r) => `${r.method} ${r.path}`);
  expect(needsRecords).toEqual(['delete /v1/enterprise/knowledge']);
});
