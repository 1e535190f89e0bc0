import { WorkflowFailedError, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { z } from 'zod';
import { newId } from '../../activities/store/ids';
import { deleteGoalRow, getGoalRow, insertGoal, listGoalRows, updateGoalText, type GoalRow } from '../../activities/store/goals';
import { AppError, notFound } from '../../schema/errors';
import { Goal, GoalCreateBody, GoalUpdateBody, ListQuery } from '../../schema/jobs';
import { goalStateQuery, pauseGoalSignal, renameGoalSignal, resumeGoalSignal } from '../../workflows/job-defs';
import { isTerminal, planFrom } from '../../workflows/job-rules';
import type { GoalState } from '../../workflows/job-types';
import { principalOf, type AppContext } from '../context';
import { withIdempotency } from '../idempotency';
import { goalView, stateFromRow } from '../job-views';
import { defineRoute, type RouteSpec } from '../route';
import { startJobWorkflow } from '../start-workflow';

const IdParams = z.object({ id: z.string().min(1).max(100) });
const prefix = (kind: 'goal' | 'sovereign') => (kind === 'goal' ? 'goal' : 'sovereign');

export function goalHandle(ctx: AppContext, kind: 'goal' | 'sovereign', id: string): WorkflowHandle {
  return ctx.deps.temporal.client.workflow.getHandle(`${prefix(kind)}-${id}`);
}

/** The row, or 404 (also for another tenant's goal). */
export async function goalRowOr404(ctx: AppContext, kind: 'goal' | 'sovereign', id: string): Promise<GoalRow> {
  const row = await getGoalRow(ctx.deps.db, principalOf(ctx).tenantId, kind, id);
  if (!row) throw notFound(kind === 'goal' ? `Goal ${id}` : `Sovereign goal ${id}`);
  return row;
}

/** Live state through the workflow query while it runs; the stored snapshot otherwise. */
export async function liveState(ctx: AppContext, row: GoalRow): Promise<GoalState> {
  if (isTerminal(row.status)) return stateFromRow(row);
  try {
    return await goalHandle(ctx, row.kind, row.id).query(goalStateQuery);
  } catch (err) {
    ctx.deps.log.warn({ goal: row.id, err: (err as Error).message }, 'goal query failed; answering from the stored snapshot');
    return stateFromRow(row);
  }
}

/** Creates the row and starts the workflow; shared by goals and sovereign goals. */
export async function createGoal(ctx: AppContext, kind: 'goal' | 'sovereign', body: z.infer<typeof GoalCreateBody>) {
  const tenantId = principalOf(ctx).tenantId;
  const id = newId(kind === 'goal' ? 'goal' : 'sov');
  const lane = body.lane ?? 'svc-oracle';
  const plan = body.steps ? planFrom(body.steps, lane) : [];
  const status = kind === 'goal' ? 'pending' : plan.length ? 'ready' : 'planning';
  const row = await insertGoal(ctx.deps.db, { id, tenantId, kind, title: body.title, description: body.description ?? null, lane, status, plan });
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
  return { row, state };
}

/** Cancels the workflow and waits until the running step acknowledged (the workflow closed). */
export async function cancelAndConfirm(ctx: AppContext, kind: 'goal' | 'sovereign', id: string): Promise<void> {
  const handle = goalHandle(ctx, kind, id);
  try {
    await handle.cancel();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return;
    throw err;
  }
  const deadline = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 60_000).unref());
  const outcome = await Promise.race([
    handle.result().then(
      () => 'closed',
      (err) => (err instanceof WorkflowFailedError || err instanceof WorkflowNotFoundError ? 'closed' : Promise.reject(err)),
    ),
    deadline,
  ]);
  if (outcome === 'timeout') throw new AppError('upstream_timeout', 'Cancellation was requested but the running step has not acknowledged it within 60 s; it will still be cancelled.');
}

export function goalRoutes(): RouteSpec[] {
  const scope = { scope: 'runtime:chat' } as const;
  return [
    defineRoute({
      method: 'post', path: '/v1/goals', access: scope, tags: ['goals'], body: GoalCreateBody, response: Goal,
      summary: 'Create a goal: workflow goal-<id> plans (or uses the given steps) and runs every step on its own. Idempotency-Key supported.',
      example: { title: 'Launch checklist', steps: [{ title: 'Draft', prompt: 'Draft a launch checklist for a small SaaS.' }, { title: 'Review', prompt: 'Review the draft and tighten it.' }] },
      handler: (ctx: AppContext, { body }) =>
        withIdempotency(ctx, 'POST /v1/goals', body, async () => {
          const { row, state } = await createGoal(ctx, 'goal', body);
          return goalView(ctx.deps.db, state, row);
        }),
    }),
    defineRoute({
      method: 'get', path: '/v1/goals', access: scope, tags: ['goals'], query: ListQuery,
      summary: 'List goals, newest first.',
      handler: async (ctx: AppContext, { query }) => {
        const { rows, total } = await listGoalRows(ctx.deps.db, { tenantId: principalOf(ctx).tenantId, kind: 'goal', ...query });
        return { object: 'list', data: await Promise.all(rows.map((r) => goalView(ctx.deps.db, stateFromRow(r), r))), total, limit: query.limit, offset: query.offset };
      },
    }),
    defineRoute({
      method: 'get', path: '/v1/goals/:id', access: scope, tags: ['goals'], params: IdParams, response: Goal,
      summary: 'A goal with its plan, progress and outputs (live state through a workflow query while it runs).',
      handler: async (ctx: AppContext, { params }) => {
        const row = await goalRowOr404(ctx, 'goal', params.id);
        return goalView(ctx.deps.db, await liveState(ctx, row), row);
      },
    }),
    defineRoute({
      method: 'put', path: '/v1/goals/:id', access: scope, tags: ['goals'], params: IdParams, body: GoalUpdateBody, response: Goal,
      responses: { 409: 'The goal has finished; it cannot be paused or resumed.' },
      summary: 'Rename, pause (after the running step) or resume a goal; delivered to the workflow as signals.',
      example: { status: 'paused' },
      handler: async (ctx: AppContext, { params, body }) => {
        const row = await goalRowOr404(ctx, 'goal', params.id);
        const handle = goalHandle(ctx, 'goal', params.id);
        if (body.status && isTerminal(row.status)) throw new AppError('conflict', `The goal is ${row.status}; it can no longer be ${body.status === 'paused' ? 'paused' : 'resumed'}.`);
        if (body.title !== undefined || body.description !== undefined) {
          await updateGoalText(ctx.deps.db, row.tenant_id, row.id, body);
          if (!isTerminal(row.status)) await handle.signal(renameGoalSignal, { title: body.title, description: body.description });
        }
        if (body.status) await handle.signal(body.status === 'paused' ? pauseGoalSignal : resumeGoalSignal);
        // Signals are asynchronous: answer once the workflow shows them (or with the stored state).
        let state = await liveState(ctx, row);
        for (let i = 0; i < 40 && body.status && !isTerminal(state.status) && state.paused !== (body.status === 'paused'); i++) {
          await new Promise((r) => setTimeout(r, 50));
          state = await liveState(ctx, row);
        }
        const fresh = (await getGoalRow(ctx.deps.db, row.tenant_id, 'goal', row.id)) ?? row;
        return goalView(ctx.deps.db, { ...state, title: body.title ?? state.title, description: body.description ?? state.description }, fresh);
      },
    }),
    defineRoute({
      method: 'delete', path: '/v1/goals/:id', access: scope, tags: ['goals'], params: IdParams, response: Goal,
      summary: 'Cancel the goal (answers once the running step acknowledged the cancellation) and remove it; returns its final state.',
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
