import { addToWaitlist } from '../../activities/store/waitlist';
import { AppError } from '../../schema/errors';
import { HealthResponse, WaitlistBody, WaitlistResponse } from '../../schema/system';
import type { AppContext } from '../context';
import { healthReport } from '../health-report';
import { buildOpenApi } from '../openapi';
import { defineRoute, type RouteSpec } from '../route';

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
        const report = await healthReport(ctx.deps);
        ctx.status = report.status === 'ok' ? 200 : 503;
        ctx.body = report;
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
        let text: string;
        try {
          text = await ctx.metrics.exposition();
        } catch (err) {
          throw new AppError('service_unavailable', 'The metrics of the other API processes did not arrive in time.', {
            headers: { 'Retry-After': '2' },
            cause: err,
          });
        }
        ctx.type = ctx.metrics.registry.contentType;
        ctx.body = text;
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
