import { isGrpcServiceError, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { TypedSearchAttributes, type Workflow } from '@temporalio/common';
import type * as workflows from '../workflows';
import { recordJobKey } from '../activities/store/job-keys';
import { AppError } from '../schema/errors';
import { SvcKind, SvcSurface, SvcTenant } from '../workflows/search-attributes';
import { publishDispatch } from '../activities/live/publish';
import type { AppContext } from './context';
import { hasDerivedJobId } from './idempotency';

const START_DEADLINE_MS = 10_000;
/** Deadline of the short calls the API makes to a running workflow (query, signal, cancel). */
export const SHORT_CALL_DEADLINE_MS = 3_000;

/** gRPC status codes (as @grpc/grpc-js numbers them) that mean the Temporal service cannot be reached now. */
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_UNAVAILABLE = 14;

/**
 * True when the Temporal frontend could not be reached, did not answer before the deadline, or the
 * call ran on a connection closed during shutdown. Looks through `err`'s causes (the Temporal
 * client wraps the gRPC error), at most 10 deep.
 */
export function isTemporalUnavailable(err: unknown): boolean {
  for (
    let e = err, depth = 0;
    e !== null && typeof e === 'object' && depth < 10;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    if (isGrpcServiceError(e) && (e.code === GRPC_UNAVAILABLE || e.code === GRPC_DEADLINE_EXCEEDED)) return true;
    // A call on a connection closed during shutdown.
    if (e instanceof Error && e.message === 'Channel has been shut down') return true;
  }
  return false;
}

/**
 * A short call to Temporal (signal, cancel, describe) bounded by a deadline: an unreachable or
 * silent cluster becomes 503 instead of a hanging request. Other errors (e.g.
 * WorkflowNotFoundError for a closed workflow) pass through for the caller to map.
 * @throws AppError service_unavailable
 */
export async function shortTemporalCall<T>(
  ctx: AppContext,
  what: string,
  fn: () => Promise<T>,
  ms = SHORT_CALL_DEADLINE_MS,
): Promise<T> {
  try {
    return await ctx.deps.temporal.connection.withDeadline(Date.now() + ms, fn);
  } catch (err) {
    if (isTemporalUnavailable(err)) {
      throw new AppError(
        'service_unavailable',
        `Could not ${what}: the workflow service did not answer. Try again shortly.`,
        { cause: err },
      );
    }
    throw err;
  }
}

type Workflows = typeof workflows;
/** The name of every workflow the worker registers (the bundle's exported workflow functions). */
export type WorkflowName = {
  [K in keyof Workflows]: Workflows[K] extends Workflow ? K : never;
}[keyof Workflows] &
  string;

/**
 * `N` names one of the bundle's workflow functions, so the name cannot drift from the registered
 * workflow and `args` are checked against that function's parameters (without loading the
 * workflow code into the API process).
 */
export interface StartJobOptions<N extends WorkflowName> {
  workflow: N;
  workflowId: string;
  /** SvcKind: goal, sovereign, pad, swarm, task, learn, ... */
  kind: string;
  tenantId: string;
  /** Human title for the memo (shown in the Temporal UI). */
  title: string;
  args: Parameters<Workflows[N]>;
  surface?: string;
  /** Default FAIL + REJECT_DUPLICATE: a duplicate start is refused, never a silent second run. */
  idConflictPolicy?: 'FAIL' | 'USE_EXISTING' | 'TERMINATE_EXISTING';
  idReusePolicy?: 'ALLOW_DUPLICATE' | 'ALLOW_DUPLICATE_FAILED_ONLY' | 'REJECT_DUPLICATE';
  /**
   * Undo what the caller stored for the job when the workflow could not be started. Not called when the
   * id is derived from an Idempotency-Key: an earlier attempt of the request may have started the
   * workflow that uses the record; the client's retry with the key starts or attaches to it.
   */
  onStartFailed?: () => Promise<unknown>;
  /** The caller already stored the starting key for this workflow (e.g. in the statement that claimed the job). */
  keyRecorded?: boolean;
}

/**
 * Starts a workflow the way every job of ours starts: meaningful id, an explicit id-conflict
 * policy, search attributes for the Temporal UI (tenant, kind, surface), a memo with the human
 * title, and the start metric.
 * @returns whether this call started it (false: a run with this id already exists)
 * @throws AppError service_unavailable when Temporal cannot be reached (after `onStartFailed`)
 */
export async function startJobWorkflow<N extends WorkflowName>(
  ctx: AppContext,
  o: StartJobOptions<N>,
): Promise<{ started: boolean }> {
  // In the all-in-one process the worker's own connection starts it, asking for the first workflow task
  // back at once (Eager Workflow Start; a server that does not offer it starts the workflow as usual).
  const { eager } = ctx.deps.temporal;
  const client = eager ?? ctx.deps.temporal.client;
  // The starting key, so that revoking it cancels this job (api/gateway); stored before the start.
  const p = ctx.state.principal;
  if (p && !o.keyRecorded)
    await recordJobKey(ctx.deps.db, { workflowId: o.workflowId, tenantId: o.tenantId, keyId: p.keyId, kind: o.kind });
  try {
    // A start takes milliseconds; when the cluster is unreachable, answer 503 within 10 s instead of retrying on.
    await client.connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
      client.workflow.start(o.workflow, {
        taskQueue: ctx.deps.config.temporal.taskQueue,
        workflowId: o.workflowId,
        args: o.args as unknown[], // checked against the named workflow by StartJobOptions<N>
        workflowIdConflictPolicy: o.idConflictPolicy ?? 'FAIL',
        workflowIdReusePolicy: o.idReusePolicy ?? 'REJECT_DUPLICATE',
        typedSearchAttributes: new TypedSearchAttributes([
          { key: SvcTenant, value: o.tenantId },
          { key: SvcKind, value: o.kind },
          { key: SvcSurface, value: o.surface ?? ctx.state.surface ?? 'api' },
        ]),
        memo: { title: o.title },
        ...(eager ? { requestEagerStart: true } : {}),
      }),
    );
    ctx.metrics.workflowStarts.inc({ kind: o.kind });
    // Public agent_dispatch frame (the kind only); a failed notify must not fail the start.
    void publishDispatch(ctx.deps.db, o.kind).catch(() => undefined);
    return { started: true };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return { started: false };
    ctx.deps.log.error({ err: (err as Error).message, workflow_id: o.workflowId }, 'workflow start failed');
    if (!hasDerivedJobId(ctx))
      await o
        .onStartFailed?.()
        .catch((e: Error) => ctx.deps.log.warn({ err: e.message }, 'cleanup after failed start failed'));
    throw new AppError(
      'service_unavailable',
      `The ${o.kind} could not be started: the workflow service is unavailable. Try again shortly.`,
      { cause: err },
    );
  }
}

/**
 * `startJobWorkflow` for the common case of a workflow with one input naming its tenant: the input
 * is checked against workflow `N`'s parameter.
 */
export function startWithInput<N extends WorkflowName>(
  ctx: AppContext,
  workflow: N,
  input: Parameters<Workflows[N]>[0] & { tenantId: string },
  o: Omit<StartJobOptions<N>, 'workflow' | 'tenantId' | 'args'>,
): Promise<{ started: boolean }> {
  return startJobWorkflow(ctx, { ...o, workflow, tenantId: input.tenantId, args: [input] as Parameters<Workflows[N]> });
}
