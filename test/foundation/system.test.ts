import { Client, Connection } from '@temporalio/client';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { sql } from 'slonik';
import { z } from 'zod';
import { createApp } from '../../api/app';
import { allRoutes } from '../../api/routes';
import { systemRoutes } from '../../api/routes/system';
import { freePort } from '../../workers/temporal-dev';
import { startHarness, type Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.close());

test('GET /v1/health is ok with both checks', async () => {
  // The checks have short deadlines; on a loaded machine the first one right after start-up may time out.
  const r = await pollUntil(
    () => h.req('GET', '/v1/health'),
    (x) => x.status === 200,
    15_000,
  );
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({
    status: 'ok',
    system: 'svc-runtime',
    checks: { database: { status: 'ok' }, temporal: { status: 'ok' } },
  });
});

test('health is degraded (503) when Temporal does not answer', async () => {
  const dead = await freePort();
  const connection = Connection.lazy({ address: `127.0.0.1:${dead}`, connectTimeout: '1 second' });
  const app = createApp({
    config: h.config,
    db: h.db,
    log: pino({ level: 'silent' }),
    temporal: { connection, client: new Client({ connection }) },
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/health`);
    const body = (await res.json()) as any;
    expect(res.status).toBe(503);
    expect(body.status).toBe('degraded');
    expect(body.checks.database.status).toBe('ok');
    expect(body.checks.temporal.status).toBe('down');
    // A short reason only: the health check is public, the detail (host, port) goes to the log.
    expect(['timeout', 'unreachable']).toContain(body.checks.temporal.error);
    expect(JSON.stringify(body)).not.toContain(String(dead));
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('GET /v1/metrics exposes request counters by route and status, and process metrics', async () => {
  await h.req('GET', '/v1/health');
  await h.req('GET', '/v1/nope');
  const r = await h.req('GET', '/v1/metrics');
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/text\/plain/);
  expect(r.text).toMatch(/svc_http_requests_total\{method="GET",route="\/v1\/health",status="200"\} \d+/);
  expect(r.text).toMatch(/svc_http_requests_total\{method="GET",route="unmatched",status="404"\} \d+/);
  expect(r.text).toMatch(/svc_http_request_duration_seconds_bucket/);
  expect(r.text).toMatch(/svc_process_cpu_user_seconds_total/);
  expect(r.text).toMatch(/svc_workflow_starts_total/);
});

test('POST /v1/waitlist stores a duplicate email once and still answers 200', async () => {
  const a = await h.req('POST', '/v1/waitlist', { body: { email: 'Ada@Example.com', name: 'Ada' } });
  const b = await h.req('POST', '/v1/waitlist', { body: { email: 'ada@example.com' } });
  const c = await h.req('POST', '/v1/waitlist', { body: {} });
  expect([a.status, b.status, c.status]).toEqual([200, 200, 200]);
  expect(b.body.duplicate).toBe(true);
  const n = await h.db.oneFirst(
    sql.type(
      z.object({ n: z.number() }),
    )`SELECT count(*)::int AS n FROM waitlist WHERE lower(email) = 'ada@example.com'`,
  );
  expect(n).toBe(1);
});

test('GET /v1/openapi.json lists every route with its access and the contract version', async () => {
  const r = await h.req('GET', '/v1/openapi.json');
  expect(r.status).toBe(200);
  expect(r.body.openapi).toBe('3.1.0');
  expect(r.body.info.version).toBe('2026-04-25');
  for (const route of allRoutes()) {
    const p = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const op = r.body.paths[p]?.[route.method];
    expect({ route: p, present: Boolean(op) }).toEqual({ route: p, present: true });
    if (typeof route.access === 'object') expect(op['x-scope']).toBe(route.access.scope);
    else expect(op['x-access']).toBe(route.access);
  }
  const register = r.body.paths['/v1/app/register'].post;
  expect(register.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/RegisterAppRequest');
  expect(r.body.components.schemas.RegisterAppRequest.required).toEqual(['app_name']);
  expect(r.body.components.schemas.ErrorResponse.properties.error.type).toBe('string');
  // Every $ref resolves inside the document.
  const refs = [...JSON.stringify(r.body).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]);
  for (const ref of refs) expect({ ref, ok: Boolean(r.body.components.schemas[ref]) }).toEqual({ ref, ok: true });
});

test('the OpenAPI document is built once per server URL', () => {
  const route = systemRoutes(allRoutes).find((r) => r.path === '/v1/openapi.json')!;
  const call = (origin: string) =>
    route.handler({ deps: { config: {} }, origin } as never, {} as never) as { servers: Array<{ url: string }> };
  const a = call('http://a.example');
  expect(call('http://a.example')).toBe(a);
  const b = call('http://b.example');
  expect(b).not.toBe(a);
  expect([a.servers[0].url, b.servers[0].url]).toEqual(['http://a.example', 'http://b.example']);
  // Bounded: many Host headers do not grow it without limit, and answers stay right.
  for (let i = 0; i < 20; i++) expect(call(`http://h${i}.example`).servers[0].url).toBe(`http://h${i}.example`);
  expect(call('http://a.example')).not.toBe(a);
});
