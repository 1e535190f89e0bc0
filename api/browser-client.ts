import { execFile } from 'node:child_process';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { LRUCache } from 'lru-cache';
import { Agent, request } from 'undici';
import { getBrowserSession, type BrowserSessionRow } from '../activities/store/browser-sessions';
import { browserWorkerEndpoint } from '../activities/store/browser-workers';
import { AppError, notFound, type ErrorCode } from '../schema/errors';
import {
  BROWSER_DIRECT_PATH,
  browserCommandUpdate,
  isEndedStatus,
  type BrowserDirectAnswer,
  type BrowserCommand,
  type BrowserCommandResult,
} from '../workflows/browser-defs';
import { principalOf, type AppContext } from './context';
import { isTemporalUnavailable } from './start-workflow';
import { workflowIds } from '../schema/workflow-ids';
import type { ActionFields } from '../schema/browser';

export const browserWorkflowId = workflowIds.browser;

/** The caller's session, or 404 (also for another tenant's id). */
export async function sessionOr404(ctx: AppContext, id: string): Promise<BrowserSessionRow> {
  const row = await getBrowserSession(ctx.deps.db, principalOf(ctx).tenantId, id);
  if (!row) throw notFound('Browser session');
  return row;
}

export function retryAfter(message: string, seconds = 30): AppError {
  return new AppError('rate_limited', message, { headers: { 'Retry-After': String(seconds) } });
}

// Failure types raised by the browser activities and the session workflow → statuses.
const STATUS: Record<string, ErrorCode> = {
  StaleRef: 'conflict',
  SessionEnded: 'conflict',
  BadInput: 'invalid_request',
  Refused: 'invalid_request',
  NotFound: 'not_found',
  StateUnreadable: 'service_unavailable',
  ActionTimeout: 'upstream_timeout',
  NavigationFailed: 'upstream_error',
  BrowserUnavailable: 'service_unavailable',
  BrowserError: 'upstream_error',
};

export function mapBrowserFailure(err: unknown): AppError {
  let e: unknown = err;
  while (e instanceof Error && !(e instanceof ApplicationFailure) && e.cause) e = e.cause;
  if (e instanceof ApplicationFailure) {
    if (e.type === 'BrowserCapacity')
      return retryAfter('Every browser worker is at its session capacity; retry later.');
    const code = STATUS[e.type ?? ''] ?? 'upstream_error';
    return new AppError(code, e.message);
  }
  if (isTemporalUnavailable(err))
    return new AppError('service_unavailable', 'The workflow service did not answer; try again shortly.', {
      cause: err,
    });
  if (err instanceof WorkflowNotFoundError) return new AppError('conflict', 'The session has ended.');
  return new AppError('upstream_error', `The browser command failed: ${(e as Error)?.message ?? 'unknown error'}`, {
    cause: err,
  });
}

// Command endpoints of browser workers by worker id. A worker id is new at every start, so an entry
// never goes out of date; a worker that is gone simply refuses the connection.
const endpoints = new LRUCache<string, { endpoint: string; token: string }>({ max: 1000 });
// Kept-alive connections to the workers; a worker that does not accept within 2 s counts as gone.
const toWorkers = new Agent({ connect: { timeout: 2000 }, keepAliveTimeout: 30_000 });

/**
 * Sends a command straight to the session's owning worker (its command endpoint), serialised
 * there per session like the workflow's commands. undefined: not answered there (no endpoint, the
 * worker is gone or does not hold the session any more): the caller runs it through the workflow,
 * which notices a lost worker and recovers the session.
 */
async function directCommand(
  ctx: AppContext,
  row: BrowserSessionRow,
  cmd: BrowserCommand,
  timeoutMs: number,
): Promise<BrowserCommandResult | undefined> {
  if (!ctx.deps.config.browser.direct || row.status !== 'open' || !row.worker_id || cmd.op === 'close') return;
  const workerId = row.worker_id;
  let ep = endpoints.get(workerId);
  if (!ep) {
    ep = (await browserWorkerEndpoint(ctx.deps.db, workerId)) ?? undefined;
    if (!ep) return;
    endpoints.set(workerId, ep);
  }
  let answer: BrowserDirectAnswer;
  try {
    const res = await request(ep.endpoint + BROWSER_DIRECT_PATH, {
      method: 'POST',
      headers: { authorization: `Bearer ${ep.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        sessionId: row.id,
        tenantId: row.tenant_id,
        cmd,
        expiresAt: Date.now() + row.idle_timeout_s * 1000,
      }),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      dispatcher: toWorkers,
    });
    if (res.statusCode !== 200) {
      await res.body.dump();
      if (res.statusCode === 401) endpoints.delete(workerId);
      return;
    }
    answer = (await res.body.json()) as BrowserDirectAnswer;
  } catch {
    return; // the worker is gone (or the connection broke): the workflow recovers the session
  }
  if (answer.ok) return answer.result;
  if (answer.type === 'SessionLost') return;
  throw mapBrowserFailure(ApplicationFailure.nonRetryable(answer.message, answer.type));
}

/**
 * Runs one command on the owning worker: straight to its command endpoint when it has one, else
 * (and whenever that fails to reach the session) as an update of the session's workflow, which
 * serialises it, runs it on the owner's queue and recovers a session whose worker is gone.
 */
export async function browserCommand(
  ctx: AppContext,
  row: BrowserSessionRow,
  cmd: BrowserCommand,
): Promise<BrowserCommandResult> {
  if (isEndedStatus(row.status) && cmd.op !== 'close')
    throw new AppError('conflict', `The session is ${row.status}; open a new one.`);
  if (row.status === 'opening') throw new AppError('conflict', 'The session is still opening; retry shortly.');
  const direct = await directCommand(ctx, row, cmd, ('timeoutMs' in cmd ? cmd.timeoutMs : 30_000) + 30_000);
  if (direct) return direct;
  const { client, connection } = ctx.deps.temporal;
  const timeout = ('timeoutMs' in cmd ? cmd.timeoutMs : 30_000) + 90_000;
  try {
    return await connection.withDeadline(Date.now() + timeout, () =>
      client.workflow.getHandle(browserWorkflowId(row.id)).executeUpdate(browserCommandUpdate, { args: [cmd] }),
    );
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError || err instanceof WorkflowNotFoundError) throw mapBrowserFailure(err);
    if (isTemporalUnavailable(err)) throw mapBrowserFailure(err);
    throw err;
  }
}

let version: Promise<string | null> | undefined;
/** `chromium --version`, once per process. */
export function chromiumVersion(path: string): Promise<string | null> {
  version ??= new Promise((resolve) =>
    execFile(path, ['--version'], { timeout: 10_000 }, (err, out) => resolve(err ? null : out.trim())),
  );
  return version;
}

/** How many browser workers poll the shared browser queue now (Temporal's view of its pollers). */
export async function browserWorkerCount(ctx: AppContext, queue: string): Promise<number> {
  const { client, connection } = ctx.deps.temporal;
  try {
    const res = await connection.withDeadline(Date.now() + 3000, () =>
      client.workflowService.describeTaskQueue({
        namespace: ctx.deps.config.temporal.namespace,
        taskQueue: { name: queue, kind: 1 },
        taskQueueType: 2,
      }),
    );
    return res.pollers?.length ?? 0;
  } catch {
    return 0;
  }
}

/** The command of a browser action from its JSON fields (route body, registry tool, workspace tool). */
export function actionCommand(b: ActionFields): BrowserCommand {
  return {
    op: 'action',
    action: b.action,
    ref: b.ref,
    selector: b.selector,
    text: b.text,
    key: b.key,
    values: b.values,
    amount: b.amount,
    timeoutMs: b.timeout_ms,
    snapshotDiff: b.snapshot_diff,
  };
}
