import { browserQueue, chromiumMissing } from '../../activities/browser/availability';
import { listBrowserSessions, countLiveBrowserSessions } from '../../activities/store/browser-sessions';
import {
  BrowserHealth,
  BrowserListQuery,
  BrowserSession,
  BrowserSessionCreateBody,
  SessionIdParams,
  SessionIdQuery,
} from '../../schema/browser';
import { browserWorkerCount, chromiumVersion, sessionOr404 } from '../browser-client';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { browserCommandRoutes } from './browser-commands';

import { closeSession, createSession, sessionView } from '../browser-sessions';

export function browserRoutes(): RouteSpec[] {
  // Browser automation is "key required" in the spec: any runtime key of the tenant (decisions, issue 10's rule).
  const access = 'key' as const;
  const tags = ['browser'];
  return [
    defineRoute({
      method: 'get',
      path: '/v1/browser/health',
      access,
      tags,
      response: BrowserHealth,
      summary:
        'Availability of the browser runtime: Chromium found and its version, browser workers polling, capacity, and your open sessions.',
      handler: async (ctx: AppContext) => {
        const { config } = ctx.deps;
        const missing = chromiumMissing(config);
        const workers = await browserWorkerCount(ctx, browserQueue(config.temporal.taskQueue));
        const version = missing ? null : await chromiumVersion(config.browser.chromiumPath);
        const reason =
          missing ??
          (workers === 0 ? 'no browser worker is polling (start a worker where Chromium is installed)' : null);
        return {
          available: reason === null,
          reason,
          chromium: { path: config.browser.chromiumPath, found: !missing, version },
          workers,
          capacity: {
            per_worker: config.browser.maxSessionsPerWorker,
            per_tenant: config.browser.maxSessionsPerTenant,
            total: workers * config.browser.maxSessionsPerWorker,
          },
          sessions_open: await countLiveBrowserSessions(ctx.deps.db, principalOf(ctx).tenantId),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/browser/sessions',
      access,
      tags,
      idempotent: true,
      body: BrowserSessionCreateBody,
      response: BrowserSession,
      responses: {
        404: 'The saved state does not exist.',
        429: 'Session cap reached (per tenant or every worker full); see Retry-After.',
        503: 'No browser worker could open it.',
      },
      summary:
        'Create a browser session (workflow browser-<id>): its own browser context on one browser worker; answers once it is open.',
      example: { viewport: { width: 1280, height: 800 }, locale: 'en-US', idle_timeout_s: 600 },
      handler: (ctx: AppContext, { body }) => createSession(ctx, body),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/browser/sessions',
      access,
      tags,
      query: BrowserListQuery,
      summary: 'List your browser sessions, newest first (live=true: only opening, open or recovering).',
      handler: async (ctx: AppContext, { query }) => {
        const rows = await listBrowserSessions(ctx.deps.db, { tenantId: principalOf(ctx).tenantId, ...query });
        return { object: 'list', data: rows.map(sessionView), limit: query.limit, offset: query.offset };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/browser/sessions/:id',
      access,
      tags,
      params: SessionIdParams,
      response: BrowserSession,
      summary: 'One browser session.',
      handler: async (ctx: AppContext, { params }) => sessionView(await sessionOr404(ctx, params.id)),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/browser/sessions/:id',
      access,
      tags,
      params: SessionIdParams,
      response: BrowserSession,
      summary: 'Close a browser session (its context is discarded; saved states stay).',
      handler: (ctx: AppContext, { params }) => closeSession(ctx, params.id),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/browser/sessions',
      access,
      tags,
      query: SessionIdQuery,
      response: BrowserSession,
      summary: 'Close a browser session named by the session_id query parameter.',
      handler: (ctx: AppContext, { query }) => closeSession(ctx, query.session_id),
    }),
    ...browserCommandRoutes(),
  ];
}
