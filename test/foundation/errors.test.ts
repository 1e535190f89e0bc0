import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import pino from 'pino';
import { sql } from 'slonik';
import { z } from 'zod';
import { createApp } from '../../api/app';
import { fromDependencyError } from '../../api/middleware/errors';
import { defineRoute } from '../../api/route';
import { freePort } from '../../workers/temporal-dev';
import { startHarness, type Harness } from '../helpers/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { SVC_BODY_LIMIT: '2048' } });
});
afterAll(async () => h?.close());

describe('one error model', () => {
  test('unknown route 404 with an ErrorResponse and a request id', async () => {
    const r = await h.req('GET', '/v1/nope');
    expect(r.status).toBe(404);
    expect(r.body.error).toMatch(/No route for GET \/v1\/nope/);
    expect(r.body.code).toBe('not_found');
    expect(r.headers.get('x-request-id')).toBe(r.body.request_id);
  });

  test('an incoming X-Request-Id is kept', async () => {
    const r = await h.req('GET', '/v1/nope', { headers: { 'X-Request-Id': 'trace-123' } });
    expect(r.headers.get('x-request-id')).toBe('trace-123');
  });

  test('405 for a known path with the wrong method, with the Allow header RFC 9110 requires', async () => {
    const r = await h.req('DELETE', '/v1/waitlist');
    expect(r.status).toBe(405);
    expect(r.body.code).toBe('method_not_allowed');
    expect(r.headers.get('allow')).toBe('POST');
    const tasks = await h.req('PUT', '/v1/tasks');
    expect([tasks.status, tasks.headers.get('allow')?.split(', ').sort()]).toEqual([405, ['GET', 'HEAD', 'POST']]);
    const mcp = await h.req('GET', '/v1/mcp');
    expect([mcp.status, mcp.headers.get('allow')]).toEqual([405, 'POST']);
    // A method nobody implements: the same JSON error, with what the path allows.
    const odd = await h.req('PROPFIND', '/v1/waitlist');
    expect([odd.status, odd.body.code, odd.headers.get('allow')]).toEqual([405, 'method_not_allowed', 'POST']);
  });

  test('malformed JSON is 400 invalid_json, never 500', async () => {
    const r = await h.req('POST', '/v1/waitlist', {
      raw: '{"email": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_json');
  });

  test('a JSON scalar body is rejected as malformed', async () => {
    const r = await h.req('POST', '/v1/waitlist', { raw: '"x"', headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(400);
  });

  test('wrong types name each field path', async () => {
    const r = await h.req('POST', '/v1/waitlist', { body: { email: 'not-an-email', name: 5 } });
    expect(r.status).toBe(400);
    expect(r.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['body.email', 'body.name']);
  });

  test('a query field given twice is 400 saying so (it read "expected number, received NaN")', async () => {
    const key = (await h.key(['runtime:chat'])).apiKey;
    const r = await h.req('GET', '/v1/tasks?limit=1&limit=2&offset=x', { key });
    expect(r.status).toBe(400);
    expect(r.body.details).toEqual([
      { path: 'query.limit', message: 'given more than once: give it once' },
      { path: 'query.offset', message: expect.not.stringContaining('once') },
    ]);
  });

  test('a body over the limit is 413', async () => {
    const r = await h.req('POST', '/v1/waitlist', { body: { name: 'x'.repeat(5000) } });
    expect(r.status).toBe(413);
    expect(r.body.code).toBe('payload_too_large');
  });

  test('a non-JSON body is 415', async () => {
    const r = await h.req('POST', '/v1/waitlist', {
      raw: 'email=a@b.c',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(r.status).toBe(415);
  });
});

describe('NUL (\\u0000) in input: 400 naming the field, never a database 500', () => {
  const nul = 'a\u0000b';
  const tenants = () => h.db.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM tenants`);

  test('bodies, queries and path parameters of any route, public or keyed, knowledge included', async () => {
    const key = (await h.key(['runtime:chat', 'runtime:spaces', 'runtime:records'])).apiKey;
    const before = await tenants();
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', '/v1/waitlist', { name: nul }, 'body.name'],
      ['POST', '/v1/app/register', { app_name: 'home', device_id: nul }, 'body.device_id'],
      ['POST', '/v1/spaces', { name: nul }, 'body.name'],
      ['POST', '/v1/share', { title: 't', content: nul }, 'body.content'],
      ['POST', '/v1/ingest', { text: `x${nul}` }, 'body.text'],
      ['GET', '/v1/enterprise/knowledge/search?q=%00', undefined, 'query.q'],
      ['GET', '/share/a%00b', undefined, 'path.id'],
    ];
    for (const [method, p, body, field] of cases) {
      const r = await h.req(method, p, { key, body, headers: { 'X-Registration-Token': 'test-registration-token' } });
      expect({ p, status: r.status, code: r.body?.code }).toEqual({ p, status: 400, code: 'invalid_request' });
      expect({ p, paths: r.body.details.map((d: { path: string }) => d.path) }).toEqual({
        p,
        paths: expect.arrayContaining([field]),
      });
      expect(r.body.error).toMatch(/NUL/);
    }
    expect(await tenants()).toBe(before); // the refused registration created no tenant
  });

  test('what slips past validation (a multipart field) is still 400 from the database error mapping', async () => {
    const key = (await h.key(['runtime:records'])).apiKey;
    const form = new FormData();
    form.append(
      'file',
      new Blob([new TextEncoder().encode('plain text body for the index')], { type: 'text/plain' }),
      'note.txt',
    );
    form.append('title', `Title ${nul}`);
    const res = await fetch(`${h.url}/v1/documents/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    const body = (await res.json()) as { code: string; error: string };
    expect({ status: res.status, code: body.code }).toEqual({ status: 400, code: 'invalid_request' });
    expect(body.error).toMatch(/NUL/);
  });
});

describe('dependency errors mapped by the error middleware', () => {
  test('PostgreSQL 22021/22P05 anywhere in the cause chain → 400; other database errors (23503 too) stay unmapped', () => {
    const wrapped = (code: string) =>
      Object.assign(new Error('slonik wrapper'), { cause: Object.assign(new Error('pg'), { code }) });
    expect(fromDependencyError(wrapped('22021'))?.status).toBe(400);
    expect(fromDependencyError(Object.assign(new Error('pg'), { code: '22P05' }))?.code).toBe('invalid_request');
    expect(fromDependencyError(wrapped('23503'))).toBeNull();
    expect(fromDependencyError(new Error('boom'))).toBeNull();
  });

  test('Temporal unreachable or not answering in time → 503 with Retry-After, from a real client', async () => {
    const dead = await freePort();
    const connection = Connection.lazy({ address: `127.0.0.1:${dead}`, connectTimeout: '1 second' });
    // Without the SDK's retry interceptor the UNAVAILABLE error comes at once instead of after its retries.
    const noRetry = Connection.lazy({ address: `127.0.0.1:${dead}`, connectTimeout: '1 second', interceptors: [] });
    const probe = defineRoute({
      method: 'get',
      path: '/v1/probe/:mode',
      access: 'public',
      summary: 'test',
      tags: ['test'],
      params: z.object({ mode: z.enum(['deadline', 'plain']) }),
      handler: async (_ctx, { params }) => {
        if (params.mode === 'deadline')
          return connection.withDeadline(Date.now() + 500, () => connection.workflowService.getSystemInfo({}));
        return noRetry.workflowService.getSystemInfo({});
      },
    });
    const app = createApp(
      {
        config: h.config,
        db: h.db,
        log: pino({ level: 'silent' }),
        temporal: { connection, client: new Client({ connection }) },
      },
      [probe],
    );
    const server = http.createServer(app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      for (const mode of ['deadline', 'plain']) {
        const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/probe/${mode}`);
        const body = (await res.json()) as { code: string; error: string };
        expect({ mode, status: res.status, code: body.code }).toEqual({
          mode,
          status: 503,
          code: 'service_unavailable',
        });
        expect(body.error).toMatch(/workflow service \(Temporal\) is unavailable/);
        expect(body.error).not.toContain(String(dead));
        expect(res.headers.get('retry-after')).toBe('5');
      }
    } finally {
      server.closeAllConnections();
      server.close();
      await connection.close().catch(() => undefined);
      await noRetry.close().catch(() => undefined);
    }
  });
});
