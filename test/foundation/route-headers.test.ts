import { allRoutes } from '../../api/routes';
import type { Harness } from '../helpers/harness';
import { withHarness } from '../helpers/with-harness';

// Issue 10 item 12: request headers are declared on the route spec and parsed by zod with body,
// query and params: one 400 shape naming `headers.<name>`, and the OpenAPI document lists them.

let h: Harness;
let key: string;
withHarness({ scopes: ['runtime:chat'] }, (harness, k) => ((h = harness), (key = k)));

test('a malformed declared header is 400 naming headers.<name>, before the handler runs', async () => {
  const task = await h.req('POST', '/v1/tasks', { key, body: { title: 'resumable' } });
  const cases: Array<[string, string, Record<string, string>, unknown, string]> = [
    [
      'POST',
      '/v1/chat/completions',
      { 'X-Session-ID': 'bad id with spaces' },
      { messages: [{ role: 'user', content: 'hi' }] },
      'headers.x-session-id',
    ],
    ['GET', `/v1/tasks/${task.body.id}/execute`, { 'Last-Event-ID': 'seven' }, undefined, 'headers.last-event-id'],
    [
      'POST',
      '/v1/goals',
      { 'Idempotency-Key': 'naïve key' },
      { title: 'g', steps: [{ title: 's', prompt: 'p' }] },
      'headers.idempotency-key',
    ],
    [
      'POST',
      '/v1/sovereign/goals/sg_missing/tick',
      { 'Idempotency-Key': 'x'.repeat(300) },
      undefined,
      'headers.idempotency-key',
    ],
  ];
  for (const [method, path, headers, body, field] of cases) {
    const r = await h.req(method, path, { key, headers, body });
    expect({ path, status: r.status, fields: r.body.details?.map((d: { path: string }) => d.path) }).toEqual({
      path,
      status: 400,
      fields: [field],
    });
  }
  expect((await h.req('GET', '/v1/goals', { key })).body.data).toEqual([]); // nothing was created
});

test('idempotency is a route flag: exactly the retry-safe creates and the tick declare it', () => {
  const flagged = allRoutes()
    .filter((r) => r.idempotent)
    .map((r) => `${r.method} ${r.path}`)
    .sort();
  expect(flagged).toEqual([
    'post /v1/browser/open',
    'post /v1/browser/sessions',
    'post /v1/email/send',
    'post /v1/enterprise/learn',
    'post /v1/goals',
    'post /v1/pad/dispatch',
    'post /v1/sovereign/goals',
    'post /v1/sovereign/goals/:id/tick',
    'post /v1/swarm/run',
    'post /v1/tools/execute-plan',
    'post /v1/tools/plan',
    'post /v1/uploads',
    'post /v1/vector_stores',
    'post /v1/vector_stores/:id/file_batches',
    'post /v1/vector_stores/:id/files',
  ]);
});

test('declared headers appear in the OpenAPI document as header parameters', async () => {
  const doc = (await h.req('GET', '/v1/openapi.json')).body;
  const headerNames = (path: string, method: string) =>
    (doc.paths[path][method].parameters ?? [])
      .filter((p: { in: string }) => p.in === 'header')
      .map((p: { name: string }) => p.name)
      .sort();
  expect(headerNames('/v1/chat/completions', 'post')).toEqual(['x-session-id', 'x-svc-skill', 'x-timezone']);
  expect(headerNames('/v1/tasks/{id}/execute', 'get')).toEqual(['last-event-id']);
  expect(headerNames('/v1/goals', 'post')).toEqual(['idempotency-key']);
  expect(headerNames('/v1/sovereign/goals/{id}/tick', 'post')).toEqual(['idempotency-key', 'prefer']);
});

test('no route reads these headers by hand any more', async () => {
  const { execSync } = await import('node:child_process');
  const out = execSync(
    `grep -rnE "ctx\\.get\\('(X-Session-ID|Last-Event-ID|Idempotency-Key|X-Svc-Skill|X-Timezone|Prefer)'" api || true`,
    { cwd: `${__dirname}/../..` },
  ).toString();
  expect(out).toBe('');
});
