import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { z } from 'zod';
import {
  getGoalRow,
  getGoalWithOutputs,
  getGoalWithSomeOutputs,
  goalPlanOutputs,
  goalStatus,
  listGoalRows,
} from '../../activities/store/goals';
import { outputsById } from '../../activities/store/job-outputs';
import { AppError, notFound } from '../../schema/errors';
import { prefersMinimal, TickHeaders } from '../../schema/headers';
import { ListQuery, SovereignCreateBody, SovereignGoal } from '../../schema/jobs';
import { isTerminal } from '../../workflows/job-rules';
import { principalOf, type AppContext } from '../context';
import { sovereignSummaryWith, sovereignView, sovereignViewWith, stateAfterTick, stateFromRow } from '../job-views';
import { defineRoute, type RouteSpec } from '../route';
import { answerFromKnown, forgetSovereign, knownOutputs, knowsSovereign, rememberSovereign } from '../sovereign-views';
import { isTemporalUnavailable } from '../start-workflow';
import type { PlanStepState } from '../../workflows/job-types';
import {
  cancelAndConfirm,
  createGoal,
  goalRowOr404,
  knownGoalOwner,
  liveState,
  rememberGoalOwner,
  tickSovereign,
} from '../workflow-clients/goals';

const IdParams = z.object({ id: z.string().min(1).max(100) });

function isClosedWorkflowError(err: unknown): boolean {
  return (
    err instanceof WorkflowNotFoundError ||
    /already completed|workflow execution.*(completed|closed)|not found/i.test((err as Error)?.message ?? '')
  );
}

export function sovereignRoutes(): RouteSpec[] {
  const scope = 'key' as const;
  return [
    defineRoute({
      method: 'post',
      path: '/v1/sovereign/goals',
      access: scope,
      tags: ['sovereign goals'],
      body: SovereignCreateBody,
      response: SovereignGoal,
      idempotent: true,
      summary:
        'Create a sovereign goal (workflow sovereign-<id>): status ready, no step runs until a tick. Without steps the model plans first: ' +
        'the answer waits (up to 20 s) for the plan and is ready (or failed when planning failed); after 20 s it answers planning. Idempotency-Key supported.',
      example: {
        title: 'Weekly review',
        steps: [
          { title: 'Collect', prompt: 'List what happened this week.' },
          { title: 'Reflect', prompt: 'What went well and what did not?' },
        ],
      },
      handler: async (ctx: AppContext, { body }) => {
        const { row, state } = await createGoal(ctx, 'sovereign', body);
        // Nothing has run yet (a retried create may find steps run: then a tick reads the goal).
        rememberSovereign(ctx, row, new Map());
        return sovereignView(ctx.deps.db, state, row);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/sovereign/goals',
      access: scope,
      tags: ['sovereign goals'],
      query: ListQuery,
      summary: 'List sovereign goals, newest first.',
      handler: async (ctx: AppContext, { query }) => {
        const { rows, total } = await listGoalRows(ctx.deps.db, {
          tenantId: principalOf(ctx).tenantId,
          kind: 'sovereign',
          ...query,
        });
        return {
          object: 'list',
          data: await Promise.all(rows.map((r) => sovereignView(ctx.deps.db, stateFromRow(r), r))),
          total,
          limit: query.limit,
          offset: query.offset,
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/sovereign/goals/:id',
      access: scope,
      tags: ['sovereign goals'],
      params: IdParams,
      response: SovereignGoal,
      summary: 'Sovereign goal state (workflow query while it lives).',
      handler: async (ctx: AppContext, { params }) => {
        const row = await goalRowOr404(ctx, 'sovereign', params.id);
        return sovereignView(ctx.deps.db, await liveState(ctx, row), row);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/sovereign/goals/:id/tick',
      access: scope,
      tags: ['sovereign goals'],
      params: IdParams,
      response: SovereignGoal,
      idempotent: true,
      headers: TickHeaders,
      responses: {
        409: 'The goal is completed, failed, cancelled or still planning.',
        503: 'The workflow service is unavailable.',
      },
      summary:
        'Run exactly one step (a Temporal update) and answer with the new state. Concurrent ticks are serialised; an Idempotency-Key makes a retried tick return the same result without running a second step. ' +
        'With `Prefer: return=minimal` (RFC 7240) and no Idempotency-Key the answer leaves out `plan` (the step just run is in `last_step`) and carries `Preference-Applied: return=minimal`; with a key the full state is answered, so a retry gets the same answer whatever it prefers.',
      handler: async (ctx: AppContext, { params, headers }) => {
        const db = ctx.deps.db;
        const tenantId = principalOf(ctx).tenantId;
        const owner = knownGoalOwner(ctx, 'sovereign', params.id);
        if (owner !== undefined && owner !== tenantId) throw notFound(`Sovereign goal ${params.id}`);
        // The outputs of the steps already run never change. A goal this process has seen owned needs no
        // read before the update: what is known of it answers (api/sovereign-views.ts), or its earlier
        // outputs are read while the step runs. Otherwise the row (ownership, a finished goal answers 409
        // without asking the workflow) comes with them first.
        let earlier: Promise<Map<string, string>>;
        if (owner === undefined) {
          const before = await getGoalWithOutputs(db, tenantId, 'sovereign', params.id);
          if (!before) throw notFound(`Sovereign goal ${params.id}`);
          const status = before.row.status;
          if (isTerminal(status)) throw new AppError('conflict', `The goal is ${status}; no step left to run.`);
          rememberGoalOwner(ctx, 'sovereign', params.id, tenantId);
          rememberSovereign(ctx, before.row, before.outputs);
          earlier = Promise.resolve(before.outputs);
        } else if (knowsSovereign(ctx, tenantId, params.id)) {
          earlier = Promise.resolve(knownOutputs(ctx, tenantId, params.id));
        } else {
          earlier = goalPlanOutputs(db, tenantId, 'sovereign', params.id);
          earlier.catch(() => undefined); // awaited below, or dropped with the update's error
        }
        const key = headers['idempotency-key'];
        // Without a key only: a stored answer must be the same whatever a retry prefers.
        const minimal = key === undefined && prefersMinimal(headers.prefer);
        try {
          // The tick answers compactly; the workflow saved the full state to the row before answering.
          const tick = await tickSovereign(ctx, params.id, key);
          // A stored answer (Idempotency-Key) is kept as the value it is; otherwise the text as is.
          const known = await answerFromKnown(
            ctx,
            tenantId,
            params.id,
            tick,
            minimal ? 'minimal' : key !== undefined ? 'value' : 'text',
          );
          if (known) {
            if ('view' in known) {
              if (minimal) ctx.set('Preference-Applied', 'return=minimal');
              return known.view;
            }
            ctx.type = 'application/json';
            return known.json;
          }
          // Not known well enough: read the row. A concurrent later tick may already have moved the
          // row on: this tick's own fields win.
          const outputs = await earlier;
          const newOutput = tick.lastStep?.outputId;
          const fresh = await getGoalWithSomeOutputs(
            db,
            tenantId,
            'sovereign',
            params.id,
            newOutput && !outputs.has(newOutput) ? [newOutput] : [],
          );
          if (!fresh) throw notFound(`Sovereign goal ${params.id}`); // deleted meanwhile
          for (const [id, text] of fresh.outputs) outputs.set(id, text);
          // Steps another tick ran meanwhile: their outputs were in neither read.
          const missing = (fresh.row.plan as PlanStepState[])
            .map((p) => p.outputId)
            .filter((id): id is string => !!id && !outputs.has(id));
          if (missing.length) for (const [id, text] of await outputsById(db, tenantId, missing)) outputs.set(id, text);
          rememberSovereign(ctx, fresh.row, outputs);
          const state = stateAfterTick(fresh.row, tick);
          if (!minimal) return sovereignViewWith(outputs, state, fresh.row);
          ctx.set('Preference-Applied', 'return=minimal');
          return sovereignSummaryWith(outputs, state, fresh.row);
        } catch (err) {
          if (err instanceof WorkflowUpdateFailedError) {
            const cause = (err.cause as Error | undefined)?.message ?? err.message;
            throw new AppError('conflict', cause);
          }
          if (isTemporalUnavailable(err)) {
            throw new AppError(
              'service_unavailable',
              'The tick could not reach the workflow service; retry with the same Idempotency-Key.',
              { cause: err },
            );
          }
          if (isClosedWorkflowError(err)) {
            const now = await goalStatus(db, tenantId, 'sovereign', params.id);
            if (now === null) throw notFound(`Sovereign goal ${params.id}`);
            throw new AppError('conflict', `The goal is ${now}; no step left to run.`);
          }
          throw err;
        }
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/sovereign/goals/:id',
      access: scope,
      tags: ['sovereign goals'],
      params: IdParams,
      response: SovereignGoal,
      responses: {
        503: 'The workflow service is unavailable.',
        504: 'The running step did not acknowledge the cancellation within 60 s.',
      },
      summary: 'Cancel a sovereign goal (answers once confirmed); the goal stays readable with status cancelled.',
      handler: async (ctx: AppContext, { params }) => {
        const row = await goalRowOr404(ctx, 'sovereign', params.id);
        forgetSovereign(ctx, row.tenant_id, row.id);
        if (!isTerminal(row.status)) await cancelAndConfirm(ctx, 'sovereign', row.id);
        const final = (await getGoalRow(ctx.deps.db, row.tenant_id, 'sovereign', row.id)) ?? row;
        return sovereignView(ctx.deps.db, stateFromRow(final), final);
      },
    }),
  ];
}
