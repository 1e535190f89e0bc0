// Opening and closing browser sessions: used by the browser routes and by the tools that open sessions.
import { z } from 'zod';
import { browserQueue } from '../activities/browser/availability';
import {
  deleteBrowserSession,
  getBrowserSession,
  insertBrowserSession,
  type BrowserSessionRow,
} from '../activities/store/browser-sessions';
import { getBrowserState } from '../activities/store/browser-states';
import { newId } from '../activities/store/ids';
import { BrowserSession, BrowserSessionCreateBody } from '../schema/browser';
import { AppError, invalid, notFound } from '../schema/errors';
import { browserAwaitOpenUpdate, type BrowserSessionInput } from '../workflows/browser-defs';
import { browserCommand, browserWorkflowId, mapBrowserFailure, retryAfter, sessionOr404 } from './browser-client';
import { principalOf, type AppContext } from './context';
import { isTemporalUnavailable, startJobWorkflow } from './start-workflow';

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
