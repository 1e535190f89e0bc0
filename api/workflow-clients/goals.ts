import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { LRUCache } from 'lru-cache';
import type { z } from 'zod';
import { jobIdFor } from '../idempotency';
import { deleteGoalRow, getGoalRow, insertGoal, type GoalRow } from '../../activities/store/goals';
import { AppError, notFound } from '../../schema/errors';
import type { GoalCreateBody } from '../../schema/jobs';
import { workflowIds } from '../../schema/workflow-ids';
import type { goalWorkflow } from '../../workflows/goal';
import {
  awaitPlannedUpdate,
  goalStateQuery,
  pauseGoalSignal,
  renameGoalSignal,
  resumeGoalSignal,
  tickUpdate,
} from '../../workflows/job-defs';
import { isTerminal, planFrom } from '../../workflows/job-rules';
import type { GoalState, TickResult } from '../../workflows/job-types';
import { principalOf, type AppContext } from '../context';
import { stateFromRow } from '../job-views';
import { SHORT_CALL_DEADLINE_MS, shortTemporalCall, startJobWorkflow } from '../start-workflow';
import { requestCancel } from './cancel';

type GoalKind = 'goal' | 'sovereign';
/** How long a sovereign create (start included) waits for the model's plan before answering `planning`. */
export const CREATE_PLAN_WAIT_MS = 20_000;

/**
 * A goal's or sovereign goal's workflow, typed (both take and return a `GoalState`): queries,
 * signals and updates go through their definitions, never a string name; ids come from `workflowIds`.
 */
function goalHandle(ctx: AppContext, kind: GoalKind, id: string) {
  return ctx.deps.temporal.client.workflow.getHandle<typeof goalWorkflow>(workflowIds[kind](id));
}

/** The row, or 404 (also for another tenant's goal). */
export async function goalRowOr404(ctx: AppContext, kind: GoalKind, id: string): Promise<GoalRow> {
  const row = await getGoalRow(ctx.deps.db, principalOf(ctx).tenantId, kind, id);
  if (!row) throw notFound(kind === 'goal' ? `Goal ${id}` : `Sovereign goal ${id}`);
  return row;
}

/**
 * Live state through the workflow query while it runs; the stored snapshot otherwise. A query
 * needs a worker: with none answering, the query gives up after `deadlineMs` (3 s) and the
 * stored snapshot answers, so reads never hang.
 */
export async function liveState(
  ctx: AppContext,
  row: GoalRow,
  deadlineMs = SHORT_CALL_DEADLINE_MS,
): Promise<GoalState> {
  if (isTerminal(row.status)) return stateFromRow(row);
  try {
    const handle = goalHandle(ctx, row.kind, row.id);
    return await shortTemporalCall(ctx, 'query the goal', () => handle.query(goalStateQuery), deadlineMs);
  } catch (err) {
    ctx.deps.log.warn(
      { goal: row.id, err: (err as Error).message },
      'goal query failed; answering from the stored snapshot',
    );
    return stateFromRow(row);
  }
}

/** Creates the row and starts the workflow; shared by goals and sovereign goals. */
export async function createGoal(ctx: AppContext, kind: GoalKind, body: z.infer<typeof GoalCreateBody>) {
  const began = Date.now();
  const tenantId = principalOf(ctx).tenantId;
  const id = jobIdFor(ctx, kind === 'goal' ? 'goal' : 'sov');
  const lane = body.lane ?? 'svc-oracle';
  const plan = body.steps ? planFrom(body.steps, lane) : [];
  const status = kind === 'goal' ? 'pending' : plan.length ? 'ready' : 'planning';
  const row = await insertGoal(ctx.deps.db, {
    id,
    tenantId,
    kind,
    title: body.title,
    description: body.description ?? null,
    lane,
    status,
    plan,
  });
  const state = stateFromRow(row);
  await startJobWorkflow(ctx, {
    workflow: kind === 'goal' ? 'goalWorkflow' : 'sovereignGoalWorkflow',
    workflowId: workflowIds[kind](id),
    kind,
    tenantId,
    title: body.title,
    args: [{ state }],
    onStartFailed: () => deleteGoalRow(ctx.deps.db, tenantId, id),
  });
  rememberGoalOwner(ctx, kind, row.id, row.tenant_id);
  if (kind === 'sovereign' && !plan.length) return awaitPlanned(ctx, row, began + CREATE_PLAN_WAIT_MS);
  return { row, state };
}

/**
 * A sovereign goal created without steps answers once the model's plan is in (`ready`), or
 * planning failed (`failed`): the workflow's `awaitPlanned` update returns then. When `deadline`
 * passes first (slow model, no worker), the current state answers (`planning`).
 */
async function awaitPlanned(
  ctx: AppContext,
  row: GoalRow,
  deadline: number,
): Promise<{ row: GoalRow; state: GoalState }> {
  let state: GoalState | null = null;
  try {
    const handle = goalHandle(ctx, 'sovereign', row.id);
    state = await ctx.deps.temporal.connection.withDeadline(deadline, () => handle.executeUpdate(awaitPlannedUpdate));
  } catch (err) {
    ctx.deps.log.info(
      { goal: row.id, err: (err as Error).message },
      'plan not ready within the create deadline; answering the current state',
    );
  }
  const fresh = (await getGoalRow(ctx.deps.db, row.tenant_id, 'sovereign', row.id)) ?? row;
  return { row: fresh, state: state ?? stateFromRow(fresh) };
}

/**
 * Sends a signal to a goal's workflow.
 * @returns false when the workflow has already closed
 * @throws AppError service_unavailable when Temporal does not answer
 */
async function signalGoal(ctx: AppContext, send: () => Promise<void>): Promise<boolean> {
  try {
    await shortTemporalCall(ctx, 'update the goal', send);
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/** Renames a goal in its workflow; false when the workflow has already closed. */
export function renameGoal(ctx: AppContext, id: string, text: { title?: string; description?: string }) {
  const handle = goalHandle(ctx, 'goal', id);
  return signalGoal(ctx, () => handle.signal(renameGoalSignal, text));
}

/** Pauses (after the running step) or resumes a goal; false when the workflow has already closed. */
export function setGoalPaused(ctx: AppContext, id: string, paused: boolean) {
  const handle = goalHandle(ctx, 'goal', id);
  return signalGoal(ctx, () => handle.signal(paused ? pauseGoalSignal : resumeGoalSignal));
}

/** Goals this process has seen owned (id -> tenant), per database (one per app instance). */
const goalOwners = new WeakMap<object, LRUCache<string, string>>();

function ownersOf(ctx: AppContext): LRUCache<string, string> {
  let owners = goalOwners.get(ctx.deps.db);
  if (!owners) goalOwners.set(ctx.deps.db, (owners = new LRUCache({ max: 50_000 })));
  return owners;
}

/**
 * The tenant a goal was seen to belong to by this process, or undefined. A goal's tenant never
 * changes and its id is never reused, so a remembered owner is as good as reading the row: a tick
 * of a goal seen before checks ownership without a round trip (another tenant still gets 404).
 */
export function knownGoalOwner(ctx: AppContext, kind: GoalKind, id: string): string | undefined {
  return ownersOf(ctx).get(`${kind}:${id}`);
}

/** Remembers that the row of goal `id` was read (or written) under `tenantId`. */
export function rememberGoalOwner(ctx: AppContext, kind: GoalKind, id: string, tenantId: string): void {
  ownersOf(ctx).set(`${kind}:${id}`, tenantId);
}

/** Runs exactly one step of a sovereign goal; the key makes a retried tick answer the same result. */
export function tickSovereign(ctx: AppContext, id: string, idempotencyKey?: string): Promise<TickResult> {
  return goalHandle(ctx, 'sovereign', id).executeUpdate(
    tickUpdate,
    idempotencyKey ? { updateId: `tick-${idempotencyKey}` } : {},
  );
}

/** Cancels the workflow and waits until the running step acknowledged (the workflow closed). */
export async function cancelAndConfirm(ctx: AppContext, kind: GoalKind, id: string): Promise<void> {
  const handle = goalHandle(ctx, kind, id);
  if (!(await requestCancel(ctx, handle, 'cancel the goal'))) return;
  const deadline = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 60_000).unref());
  const outcome = await Promise.race([
    handle.result().then(
      () => 'closed',
      (err) =>
        err instanceof WorkflowFailedError || err instanceof WorkflowNotFoundError ? 'closed' : Promise.reject(err),
    ),
    deadline,
  ]);
  if (outcome === 'timeout')
    throw new AppError(
      'upstream_timeout',
      'Cancellation was requested but the running step has not acknowledged it within 60 s; it will still be cancelled.',
    );
}
