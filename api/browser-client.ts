import { execFile } from 'node:child_process';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { getBrowserSession, type BrowserSessionRow } from '../activities/store/browser-sessions';
import { AppError, notFound, type ErrorCode } from '../schema/errors';
import {
  browserCommandUpdate,
  isEndedStatus,
  type BrowserCommand,
  type BrowserCommandResult,
} from '../workflows/browser-defs';
import { principalOf, type AppContext } from './context';
import { isTemporalUnavailable } from './start-workflow';
import { workflowIds } from '../schema/workflow-ids';

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

/** Runs one command as an update of the session's workflow (serialised there, run on the owning worker). */
export async function browserCommand(
  ctx: AppContext,
  row: BrowserSessionRow,
  cmd: BrowserCommand,
): Promise<BrowserCommandResult> {
  if (isEndedStatus(row.status) && cmd.op !== 'close')
    throw new AppError('conflict', `The session is ${row.status}; open a new one.`);
  if (row.status === 'opening') throw new AppError('conflict', 'The session is still opening; retry shortly.');
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
