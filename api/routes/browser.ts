import { z } from 'zod';
import { browserQueue, chromiumMissing } from '../../activities/browser/availability';
import {
  deleteBrowserSession,
  getBrowserSession,
  insertBrowserSession,
  listBrowserSessions,
  countLiveBrowserSessions,
  type BrowserSessionRow,
} from '../../activities/store/browser-sessions';
import { getBrowserState } from '../../activities/store/browser-states';
import { newId } from '../../activities/store/ids';
import {
  BrowserHealth,
  BrowserListQuery,
  BrowserSession,
  BrowserSessionCreateBody,
  SessionIdParams,
  SessionIdQuery,
} from '../../schema/browser';
import { AppError, invalid, notFound } from '../../schema/errors';
import { browserAwaitOpenUpdate, type BrowserSessionInput } from '../../workflows/browser-defs';
import {
  browserCommand,
  browserWorkerCount,
  browserWorkflowId,
  chromiumVersion,
  mapBrowserFailure,
  retryAfter,
  sessionOr404,
} from '../browser-client';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { isTemporalUnavailable, startJobWorkflow } from '../start-workflow';
import { browserCommandRoutes } from './browser-commands';

const OPEN_WAIT_MS = 90_000;

export function sessionView(row: BrowserSessionRow): z.infer<typeof BrowserSession> {
  return {
    id: row.id,
    object: 'browser.session',
    status: row.status,
    url: row.url,
    title: row.title,
    worker_id: row.worker_id,
    idle_timeout_s: row.idle_timeout_s,
    expires_at: row.expires_at,
    checkpoint_at: row.checkpoint_at,
    recoveries: row.recoveries,
    error: row.error,
    options: row.options,
    created_at: row.created_at,
    closed_at: row.closed_at,
  };
}

/** Opens a session (id random, or given: a workspace run's own session has an id derived from the run). */
export async function createSession(
  ctx: AppContext,
  body: z.infer<typeof BrowserSessionCreateBody>,
  opts: { id?: string } = {},
) {
  const { config, db } = ctx.deps;
  const tenantId = principalOf(ctx).tenantId;
  const idle = body.idle_timeout_s ?? config.browser.idleTimeoutS;
  if (idle > config.browser.maxIdleTimeoutS) {
    throw invalid([{ path: 'body.idle_timeout_s', message: `must be at most ${config.browser.maxIdleTimeoutS}` }]);
  }
  let initialStateId: string | undefined;
  if (body.state) {
    const st =
      (await getBrowserState(db, tenantId, { id: body.state })) ??
      (await getBrowserState(db, tenantId, { name: body.state }));
    if (!st) throw notFound('Saved browser state');
    initialStateId = st.id;
  }
  const options = {
    viewport: body.viewport,
    locale: body.locale,
    timezone: body.timezone,
    user_agent: body.user_agent,
  };
  const id = opts.id ?? newId('bse');
  const row = await insertBrowserSession(db, {
    id,
    tenantId,
    options,
    idleTimeoutS: idle,
    cap: config.browser.maxSessionsPerTenant,
  });
  if (!row)
    throw retryAfter(
      `This tenant already has ${config.browser.maxSessionsPerTenant} open browser sessions; close one or retry later.`,
      60,
    );
  const input: BrowserSessionInput = {
    state: {
      sessionId: id,
      tenantId,
      status: 'opening',
      workerId: null,
      queue: null,
      url: null,
      title: null,
      refs: [],
      idleTimeoutS: idle,
      expiresAt: null,
      recoveries: 0,
      error: null,
    },
    options,
    browserQueue: browserQueue(config.temporal.taskQueue),
    initialStateId,
    heartbeatS: config.browser.heartbeatS,
  };
  await startJobWorkflow(ctx, {
    workflow: 'browserSessionWorkflow',
    workflowId: browserWorkflowId(id),
    kind: 'browser',
    tenantId,
    title: `Browser session ${id}`,
    args: [input],
    onStartFailed: () => deleteBrowserSession(db, tenantId, id),
  });
  try {
    const { client, connection } = ctx.deps.temporal;
    const state = await connection.withDeadline(Date.now() + OPEN_WAIT_MS, () =>
      client.workflow.getHandle(browserWorkflowId(id)).executeUpdate(browserAwaitOpenUpdate),
    );
    if (state.status === 'failed') {
      // Nothing half-stored: a session that never opened is forgotten.
      await deleteBrowserSession(db, tenantId, id);
      if (state.error?.startsWith('BrowserCapacity'))
        throw retryAfter('Every browser worker is at its session capacity; retry later.');
      throw new AppError(
        'service_unavailable',
        `The browser session could not be opened: ${state.error ?? 'unknown error'}`,
      );
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (!isTemporalUnavailable(err)) throw mapBrowserFailure(err);
    // Still opening after the wait: answer with the row as it is (status opening).
  }
  return sessionView((await getBrowserSession(db, tenantId, id)) ?? row);
}

export async function closeSession(ctx: AppContext, id: string) {
  const row = await sessionOr404(ctx, id);
  if (row.status !== 'closed' && row.status !== 'expired' && row.status !== 'failed') {
    await browserCommand(ctx, row, { op: 'close' }).catch((err) => {
      // A workflow that is already gone has nothing to close.
      if (!(err instanceof AppError && err.status === 409)) throw err;
    });
  }
  return sessionView((await getBrowserSession(ctx.deps.db, row.tenant_id, id)) ?? row);
}

export function browserRoutes(): RouteSpec[] {
  const access = { scope: 'runtime:workspaces' } as const;
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
