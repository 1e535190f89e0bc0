import { WorkflowFailedError, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { z } from 'zod';
import { jobIdFor } from '../idempotency';
import {
  deleteGoalRow,
  getGoalRow,
  insertGoal,
  listGoalRows,
  updateGoalText,
  type GoalRow,
} from '../../activities/store/goals';
import { AppError, notFound } from '../../schema/errors';
import { Goal, GoalCreateBody, GoalUpdateBody, ListQuery } from '../../schema/jobs';
import {
  awaitPlannedUpdate,
  goalStateQuery,
  pauseGoalSignal,
  renameGoalSignal,
  resumeGoalSignal,
} from '../../workflows/job-defs';
import { isTerminal, planFrom } from '../../workflows/job-rules';
import type { GoalState } from '../../workflows/job-types';
import { principalOf, type AppContext } from '../context';
import { goalView, stateFromRow } from '../job-views';
import { defineRoute, type RouteSpec } from '../route';
import { SHORT_CALL_DEADLINE_MS, shortTemporalCall, startJobWorkflow } from '../start-workflow';

const IdParams = z.object({ id: z.string().min(1).max(100) });
const prefix = (kind: 'goal' | 'sovereign') => (kind === 'goal' ? 'goal' : 'sovereign');
/** How long a sovereign create (start included) waits for the model's plan before answering `planning`. */
export const CREATE_PLAN_WAIT_MS = 20_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function goalHandle(ctx: AppContext, kind: 'goal' | 'sovereign', id: string): WorkflowHandle {
  return ctx.deps.temporal.client.workflow.getHandle(`${prefix(kind)}-${id}`);
}

/** The row, or 404 (also for another tenant's goal). */
export async function goalRowOr404(ctx: AppContext, kind: 'goal' | 'sovereign', id: string): Promise<GoalRow> {
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
export async function createGoal(ctx: AppContext, kind: 'goal' | 'sovereign', body: z.infer<typeof GoalCreateBody>) {
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
    workflowId: `${prefix(kind)}-${id}`,
    kind,
    tenantId,
    title: body.title,
    args: [{ state }],
    onStartFailed: () => deleteGoalRow(ctx.deps.db, tenantId, id),
  });
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

/** Cancels the workflow and waits until the running step acknowledged (the workflow closed). */
export async function cancelAndConfirm(ctx: AppContext, kind: 'goal' | 'sovereign', id: string): Promise<void> {
  const handle = goalHandle(ctx, kind, id);
  try {
    await shortTemporalCall(ctx, 'cancel the goal', () => handle.cancel());
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return;
    throw err;
  }
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

export function goalRoutes(): RouteSpec[] {
  const scope = 'key' as const;
  return [
    defineRoute({
      method: 'post',
      path: '/v1/goals',
      access: scope,
      tags: ['goals'],
      body: GoalCreateBody,
      response: Goal,
      idempotent: true,
      summary:
        'Create a goal: workflow goal-<id> plans (or uses the given steps) and runs every step on its own. Idempotency-Key supported.',
      example: {
        title: 'Launch checklist',
        steps: [
          { title: 'Draft', prompt: 'Draft a launch checklist for a small SaaS.' },
          { title: 'Review', prompt: 'Review the draft and tighten it.' },
        ],
      },
      handler: async (ctx: AppContext, { body }) => {
        const { row, state } = await createGoal(ctx, 'goal', body);
        return goalView(ctx.deps.db, state, row);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/goals',
      access: scope,
      tags: ['goals'],
      query: ListQuery,
      summary: 'List goals, newest first.',
      handler: async (ctx: AppContext, { query }) => {
        const { rows, total } = await listGoalRows(ctx.deps.db, {
          tenantId: principalOf(ctx).tenantId,
          kind: 'goal',
          ...query,
        });
        return {
          object: 'list',
          data: await Promise.all(rows.map((r) => goalView(ctx.deps.db, stateFromRow(r), r))),
          total,
          limit: query.limit,
          offset: query.offset,
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/goals/:id',
      access: scope,
      tags: ['goals'],
      params: IdParams,
      response: Goal,
      summary: 'A goal with its plan, progress and outputs (live state through a workflow query while it runs).',
      handler: async (ctx: AppContext, { params }) => {
        const row = await goalRowOr404(ctx, 'goal', params.id);
        return goalView(ctx.deps.db, await liveState(ctx, row), row);
      },
    }),
    defineRoute({
      method: 'put',
      path: '/v1/goals/:id',
      access: scope,
      tags: ['goals'],
      params: IdParams,
      body: GoalUpdateBody,
      response: Goal,
      responses: {
        409: 'The goal has finished; it cannot be paused or resumed.',
        503: 'The workflow service is unavailable.',
      },
      summary: 'Rename, pause (after the running step) or resume a goal; delivered to the workflow as signals.',
      example: { status: 'paused' },
      handler: async (ctx: AppContext, { params, body }) => {
        const row = await goalRowOr404(ctx, 'goal', params.id);
        const handle = goalHandle(ctx, 'goal', params.id);
        const finished = (status: string) =>
          new AppError(
            'conflict',
            `The goal is ${status}; it can no longer be ${body.status === 'paused' ? 'paused' : 'resumed'}.`,
          );
        if (body.status && isTerminal(row.status)) throw finished(row.status);
        let open = true;
        if (body.title !== undefined || body.description !== undefined) {
          await updateGoalText(ctx.deps.db, row.tenant_id, row.id, body);
          if (!isTerminal(row.status))
            open = await signalGoal(ctx, () =>
              handle.signal(renameGoalSignal, { title: body.title, description: body.description }),
            );
        }
        if (body.status && open)
          open = await signalGoal(ctx, () =>
            handle.signal(body.status === 'paused' ? pauseGoalSignal : resumeGoalSignal),
          );
        if (!open) {
          // The workflow closed after the row was read: the goal has finished (the text change is kept).
          const now = (await getGoalRow(ctx.deps.db, row.tenant_id, 'goal', row.id)) ?? row;
          if (body.status) throw finished(isTerminal(now.status) ? now.status : 'already finished');
          return goalView(ctx.deps.db, stateFromRow(now), now);
        }
        // Signals are asynchronous: answer once the workflow shows them, or after ~3 s with what it shows then
        // (with no worker answering queries, the stored state).
        const deadline = Date.now() + SHORT_CALL_DEADLINE_MS;
        const left = () => Math.max(deadline - Date.now(), 100);
        let state = await liveState(ctx, row, left());
        while (
          body.status &&
          !isTerminal(state.status) &&
          state.paused !== (body.status === 'paused') &&
          Date.now() < deadline
        ) {
          await sleep(50);
          state = await liveState(ctx, row, left());
        }
        const fresh = (await getGoalRow(ctx.deps.db, row.tenant_id, 'goal', row.id)) ?? row;
        return goalView(
          ctx.deps.db,
          { ...state, title: body.title ?? state.title, description: body.description ?? state.description },
          fresh,
        );
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/goals/:id',
      access: scope,
      tags: ['goals'],
      params: IdParams,
      response: Goal,
      responses: {
        503: 'The workflow service is unavailable.',
        504: 'The running step did not acknowledge the cancellation within 60 s.',
      },
      summary:
        'Cancel the goal (answers once the running step acknowledged the cancellation) and remove it; returns its final state.',
      handler: async (ctx: AppContext, { params }) => {
        const row = await goalRowOr404(ctx, 'goal', params.id);
        if (!isTerminal(row.status)) await cancelAndConfirm(ctx, 'goal', row.id);
        const final = (await getGoalRow(ctx.deps.db, row.tenant_id, 'goal', row.id)) ?? row;
        const view = await goalView(ctx.deps.db, stateFromRow(final), final);
        await deleteGoalRow(ctx.deps.db, row.tenant_id, row.id);
        return { ...view, deleted: true };
      },
    }),
  ];
}
