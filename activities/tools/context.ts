import { Client, Connection } from '@temporalio/client';
import type { AppContext } from '../../api/context';
import { seedJobIds } from '../../api/idempotency';
import type { ActivityDeps } from '../deps';
import type { KeyPrincipal } from '../store/keys';
import type { ToolContext, ToolDeps } from './types';

/** One lazy Temporal client per worker process and address: it connects on the first tool that needs it. */
const lazyClients = new Map<string, ToolDeps['temporal']>();

function workerTemporal(deps: ActivityDeps): ToolDeps['temporal'] {
  const address = deps.config.temporal.address ?? `127.0.0.1:${deps.config.temporal.devPort}`;
  const key = `${address}/${deps.config.temporal.namespace}`;
  let t = lazyClients.get(key);
  if (!t) {
    const connection = Connection.lazy({ address });
    t = { connection, client: new Client({ connection, namespace: deps.config.temporal.namespace }) };
    lazyClients.set(key, t);
  }
  return t;
}

/**
 * A ToolContext on the worker side (plan steps, agent tool calls): the activity deps (db, config,
 * log, models) plus a Temporal client for tools that start or drive workflows (research, task_execute,
 * browser_*, email_send). The principal is the key the run was started with (its tenant and scopes).
 */
export function buildWorkerToolContext(
  deps: ActivityDeps,
  principal: KeyPrincipal,
  opts: { surface?: string; idempotencyKey?: string; routes?: ToolContext['routes'] } = {},
): ToolContext {
  return {
    principal,
    surface: opts.surface,
    idempotencyKey: opts.idempotencyKey,
    deps: { config: deps.config, db: deps.db, log: deps.log, models: deps.models, temporal: workerTemporal(deps) },
    // The route table lives in the API (importing it here would be a cycle): callers that need
    // get_capabilities pass `allRoutes`; without it the tool lists no families.
    routes: opts.routes ?? (() => []),
  };
}

const noMetrics = { workflowStarts: { inc: () => undefined } };

/**
 * The slice of a Koa context that the API's service functions read (deps, state.principal,
 * state.surface, metrics.workflowStarts), so a tool calls the very functions its route calls
 * (startJobWorkflow, queueEmail, browserCommand...) without an HTTP round trip.
 */
export function toolAppContext(ctx: ToolContext): AppContext {
  const app = {
    deps: { ...ctx.deps },
    state: { requestId: ctx.idempotencyKey ?? 'tool', principal: ctx.principal, surface: ctx.surface },
    metrics: noMetrics,
  } as unknown as AppContext;
  // A step key makes the jobs this tool creates (jobIdFor) the same on a re-run after a crash.
  if (ctx.idempotencyKey) seedJobIds(app, JSON.stringify([ctx.principal.tenantId, 'tool', ctx.idempotencyKey]));
  return app;
}
