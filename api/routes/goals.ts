import { z } from 'zod';
import { deleteGoalRow, getGoalRow, listGoalRows, updateGoalText } from '../../activities/store/goals';
import { AppError } from '../../schema/errors';
import { Goal, GoalCreateBody, GoalUpdateBody, ListQuery } from '../../schema/jobs';
import { isTerminal } from '../../workflows/job-rules';
import { principalOf, type AppContext } from '../context';
import { goalView, stateFromRow } from '../job-views';
import { defineRoute, type RouteSpec } from '../route';
import { SHORT_CALL_DEADLINE_MS } from '../start-workflow';
import {
  cancelAndConfirm,
  createGoal,
  goalRowOr404,
  liveState,
  renameGoal,
  setGoalPaused,
} from '../workflow-clients/goals';

const IdParams = z.object({ id: z.string().min(1).max(100) });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
            open = await renameGoal(ctx, row.id, { title: body.title, description: body.description });
        }
        if (body.status && open) open = await setGoalPaused(ctx, row.id, body.status === 'paused');
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
