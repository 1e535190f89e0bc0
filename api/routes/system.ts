import { isGrpcDeadlineError } from '@temporalio/client';
import type { Logger } from 'pino';
import { sql } from 'slonik';
import { z } from 'zod';
import { knowledgeMode } from '../../activities/knowledge/mode';
import { addToWaitlist } from '../../activities/store/waitlist';
import { HealthResponse, WaitlistBody, WaitlistResponse } from '../../schema/system';
import type { AppContext } from '../context';
import { buildOpenApi, CONTRACT_VERSION } from '../openapi';
import { defineRoute, type RouteSpec } from '../route';

/**
 * Runs one dependency check with a time limit. The public answer says only `timeout` or
 * `unreachable`: the error text (hosts, ports, driver details) goes to the log, never to the client.
 */
async function timed(name: string, log: Logger, check: () => Promise<unknown>, timeoutMs: number) {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => {
          timedOut = true;
          reject(new Error(`no answer within ${timeoutMs} ms`));
        }, timeoutMs);
      }),
    ]);
    return { status: 'ok' as const, latency_ms: Math.round(performance.now() - started) };
  } catch (err) {
    const detail = (err as Error).message?.split('\n')[0].slice(0, 300) ?? String(err);
    const error = timedOut || isGrpcDeadlineError(err) || /time(d)? ?out|deadline/i.test(detail) ? 'timeout' : 'unreachable';
    log.warn({ check: name, err: detail }, `health check failed: ${name} ${error}`);
    return { status: 'down' as const, error };
  } finally {
    clearTimeout(timer);
  }
}

/** Distinct server URLs whose OpenAPI document is kept (bounds what Host headers can make us hold). */
const OPENAPI_CACHE_SIZE = 8;

export function systemRoutes(all: () => RouteSpec[]): RouteSpec[] {
  const openApiCache = new Map<string, ReturnType<typeof buildOpenApi>>();
  return [
    defineRoute({
      method: 'get',
      path: '/v1/health',
      access: 'public',
      summary: 'Service health with database and Temporal checks (503 when degraded).',
      tags: ['system'],
      response: HealthResponse,
      responses: { 503: 'Degraded: a dependency is down (body is the same health object).' },
      handler: async (ctx: AppContext) => {
        const { db, temporal } = ctx.deps;
        const [database, temporalCheck, knowledge] = await Promise.all([
          timed('database', ctx.deps.log, () => db.oneFirst(sql.type(z.object({ ok: z.number() }))`SELECT 1::int AS ok`), 2000),
          timed(
            'temporal',
            ctx.deps.log,
            () => temporal.connection.withDeadline(Date.now() + 2000, () => temporal.connection.workflowService.getSystemInfo({})),
            2500,
          ),
          Promise.race([knowledgeMode(db, ctx.deps.config, ctx.deps.log), new Promise<undefined>((r) => setTimeout(() => r(undefined), 2500).unref())]).catch(() => undefined),
        ]);
        const ok = database.status === 'ok' && temporalCheck.status === 'ok';
        ctx.status = ok ? 200 : 503;
        ctx.body = { status: ok ? 'ok' : 'degraded', system: 'svc-runtime', version: CONTRACT_VERSION, checks: { database, temporal: temporalCheck }, knowledge };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/metrics',
      access: 'public',
      summary: 'Prometheus metrics (text exposition format).',
      tags: ['system'],
      produces: ['text/plain'],
      handler: async (ctx: AppContext) => {
        ctx.type = ctx.metrics.registry.contentType;
        ctx.body = await ctx.metrics.registry.metrics();
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/openapi.json',
      access: 'public',
      summary: 'This OpenAPI 3.1 contract.',
      tags: ['system'],
      handler: (ctx: AppContext) => {
        // Built once per server URL (the Host header decides it without SVC_PUBLIC_URL; a few kept).
        const serverUrl = ctx.deps.config.publicUrl ?? ctx.origin;
        let doc = openApiCache.get(serverUrl);
        if (!doc) {
          doc = buildOpenApi(all(), { serverUrl });
          if (openApiCache.size >= OPENAPI_CACHE_SIZE) openApiCache.delete(openApiCache.keys().next().value!);
          openApiCache.set(serverUrl, doc);
        }
        return doc;
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/waitlist',
      access: 'public',
      summary: 'Join the waitlist (a duplicate email is stored once and still answers 200).',
      tags: ['system'],
      body: WaitlistBody,
      response: WaitlistResponse,
      example: { email: 'ada@example.com', name: 'Ada' },
      handler: async (ctx: AppContext, { body }) => {
        const r = await addToWaitlist(ctx.deps.db, { email: body.email?.toLowerCase(), name: body.name });
        return { ok: true, duplicate: r.duplicate };
      },
    }),
  ];
}
