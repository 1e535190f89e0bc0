import { sql } from 'slonik';
import { z } from 'zod';
import { reasoningEndpoints } from '../../reasoning/registry';
import type { Harness } from '../helpers/harness';
import { withHarness } from '../helpers/with-harness';

let h: Harness;
let key: string;
withHarness({ scopes: ['runtime:chat'] }, (harness, k) => ((h = harness), (key = k)));

const SPEC_PATHS = [
  '/learning/mastery/compile',
  '/quest/scaffold',
  '/behavior/create',
  '/context/momentum',
  '/procedure/compile',
  '/workflow/grammar/compile',
  '/actions/plan',
  '/conversation/harvest',
  '/temporal/coordinate',
  '/ambient/continuity/compile',
  '/anticipation/prepare',
  '/codebase/task/plan',
  '/continuity/recover',
  '/execution/orchestrate',
  '/workgraph/compile',
  '/workgraph/answer',
  '/contextual-action/plan',
  '/signals/opportunities',
  '/intent/timeline',
  '/procedural/crystallize',
  '/memory/semantic/graph',
  '/resources/commitment/reason',
  '/ambient/intent/suggest',
];

/** Row counts of every table in the test database: the endpoints must change none. */
async function rowCounts(): Promise<Record<string, number>> {
  const tables = await h.db.anyFirst(sql.type(z.object({ t: z.string() }))`
    SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`);
  const out: Record<string, number> = {};
  for (const t of tables) {
    out[t] = await h.db.oneFirst(
      sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM ${sql.identifier([t])}`,
    );
  }
  return out;
}

test('all 23 structured-reasoning endpoints are mounted, documented, and none is missing', async () => {
  const mounted = reasoningEndpoints()
    .map((e) => e.path)
    .sort();
  expect(mounted).toEqual([...SPEC_PATHS].sort());
  const doc = (await h.req('GET', '/v1/openapi.json')).body;
  for (const p of SPEC_PATHS) {
    const op = doc.paths[`/v1${p}`]?.post;
    expect({
      p,
      scope: op?.['x-scope'],
      keyed: op?.security,
      example: Boolean(op?.requestBody?.content['application/json'].example),
    }).toEqual({ p, scope: undefined, keyed: [{ bearerKey: [] }], example: true });
    expect(op.responses['200'].content['application/json'].schema).toBeDefined();
  }
});

describe.each(reasoningEndpoints().map((e) => [e.path, e] as const))('POST /v1%s', (path, endpoint) => {
  test('the documented example compiles (200), matches the response schema and is deterministic', async () => {
    const a = await h.req('POST', `/v1${path}`, {
      key,
      body: endpoint.example,
      headers: { 'X-Svc-Context': 'studio' },
    });
    expect(a.status).toBe(200);
    expect(endpoint.response.safeParse(a.body).success).toBe(true);
    const b = await h.req('POST', `/v1${path}`, {
      key,
      body: endpoint.example,
      headers: { 'X-Svc-Context': 'studio' },
    });
    expect(b.body).toEqual(a.body);
  });

  test('malformed input is 400 with field paths; no key 401; wrong scope 403', async () => {
    const bad = await h.req('POST', `/v1${path}`, {
      key,
      body: { surface: 42, items: 'nope', messages: 7, tasks: {}, sources: 1 },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details.length).toBeGreaterThan(0);
    for (const d of bad.body.details) expect(d.path).toMatch(/^body(\.|$)/);
    const broken = await h.req('POST', `/v1${path}`, {
      key,
      raw: '{',
      headers: { 'content-type': 'application/json' },
    });
    expect(broken.status).toBe(400);
    expect((await h.req('POST', `/v1${path}`, { body: endpoint.example })).status).toBe(401);
    // Spec: "key required" and nothing more, so any runtime key works; a bootstrap key does not.
    const other = await h.key(['runtime:models']);
    expect((await h.req('POST', `/v1${path}`, { key: other.apiKey, body: endpoint.example })).status).toBe(200);
    const boot = await h.key(['bootstrap:app:home'], { kind: 'bootstrap' });
    const forbidden = await h.req('POST', `/v1${path}`, { key: boot.apiKey, body: endpoint.example });
    expect(forbidden.status).toBe(403);
  });
});

test('no structured endpoint writes to the database (row counts unchanged)', async () => {
  const before = await rowCounts();
  for (const e of reasoningEndpoints()) {
    const r = await h.req('POST', `/v1${e.path}`, { key, body: e.example });
    expect(r.status).toBe(200);
  }
  const after = await rowCounts();
  // api_keys.last_used_at may be touched, but no rows are added or removed anywhere.
  expect(after).toEqual(before);
});
