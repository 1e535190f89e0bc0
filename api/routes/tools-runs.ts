import { lastEventId } from '../../activities/store/events';
import { mayUse, runsLocally, toolRegistry } from '../../activities/tools/registry';
import {
  addApprovals,
  deleteRun,
  getPlan,
  getRun,
  insertRun,
  resultsOf,
  type RunRow,
} from '../../activities/store/tool-plans';
import { AppError, invalid, notFound } from '../../schema/errors';
import { ResumeHeaders } from '../../schema/headers';
import { ApproveBody, ExecutePlanBody, PlanRun, RunIdParams, type ToolPlan } from '../../schema/tools-plans';
import { streams, workflowIds } from '../../schema/workflow-ids';
import { principalOf, type AppContext } from '../context';
import { jobIdFor } from '../idempotency';
import { defineRoute, type RouteSpec } from '../route';
import { lastEventIdOf, pipeJobEvents, wantsEventStream } from '../sse';
import { approvePlanRun, cancelPlanRun, queryPlanRun, startPlanRun } from '../workflow-clients/plans';
import { createPlan } from '../plan-service';

const tags = ['tools'];
const produces = ['application/json', 'text/event-stream'];
const OPEN = new Set(['running', 'awaiting_approval']);

async function runView(ctx: AppContext, row: RunRow, plan: ToolPlan): Promise<PlanRun> {
  const { db } = ctx.deps;
  const live = OPEN.has(row.status) ? await queryPlanRun(ctx, row.id) : null;
  const results = new Map((await resultsOf(db, row.tenant_id, row.id)).map((r) => [r.step_id, r]));
  const liveSteps = new Map(live?.steps.map((s) => [s.id, s.status]));
  const last = await lastEventId(db, { tenantId: row.tenant_id, stream: streams.plan(row.id) });
  return {
    id: row.id,
    object: 'tool.plan.run',
    plan_id: row.plan_id,
    workflow_id: row.status === 'dry_run' ? null : workflowIds.plan(row.id),
    status: row.status,
    approved: row.approved,
    awaiting: row.awaiting,
    steps: plan.steps.map((s) => {
      const r = results.get(s.id);
      if (r) return { id: s.id, tool: s.tool, status: r.status, result: r.result ?? undefined, error: r.error };
      const waits = s.gate && !row.approved.includes(s.id);
      return {
        id: s.id,
        tool: s.tool,
        status: liveSteps.get(s.id) ?? (row.status === 'dry_run' && waits ? 'awaiting_approval' : 'pending'),
      };
    }),
    ...(row.status === 'dry_run' ? { plan } : {}),
    last_event_id: last ? String(last) : null,
    created_at: row.created_at,
    finished_at: row.finished_at,
  };
}

async function runOr404(ctx: AppContext, id: string): Promise<{ row: RunRow; plan: ToolPlan }> {
  const tenantId = principalOf(ctx).tenantId;
  const row = await getRun(ctx.deps.db, tenantId, id);
  const plan = row && (await getPlan(ctx.deps.db, tenantId, row.plan_id));
  if (!row || !plan) throw notFound('Plan run');
  return { row, plan };
}

function streamRun(ctx: AppContext, row: RunRow, afterId: number): void {
  pipeJobEvents(ctx, { tenantId: row.tenant_id, stream: streams.plan(row.id), afterId });
}

/** Plan runs (workflow plan-<run id>): execute, poll or stream, approve gated steps, cancel. */
export function planRunRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/tools/execute-plan',
      access: 'key',
      tags,
      summary:
        'Run a stored plan (plan_id) or a new one (plan) as workflow plan-<run id>: independent steps in parallel, each step exactly once, ' +
        'gated steps wait for approval (status awaiting_approval). 202 with the run; with Accept: text/event-stream its events (step, status, done). ' +
        'dry_run: nothing runs, the preview is returned. Honours Idempotency-Key.',
      body: ExecutePlanBody,
      idempotent: true,
      response: PlanRun,
      status: 202,
      produces,
      responses: {
        400: 'Invalid body or plan (JSON pointers); approve names a step that is not gated.',
        403: 'A step uses a tool beyond this key’s scopes.',
        404: 'No such plan (or another tenant’s).',
        503: 'The workflow service is unavailable.',
      },
      example: { plan_id: 'tpl_...', approve: ['notify'], dry_run: false },
      handler: async (ctx: AppContext, { body }) => {
        const p = principalOf(ctx);
        const { db } = ctx.deps;
        const plan = body.plan ? await createPlan(ctx, body.plan) : await getPlan(db, p.tenantId, body.plan_id!);
        if (!plan) throw notFound('Plan');
        // A plan may come from another key of the tenant: this key needs every step's scope too.
        const tools = new Map(toolRegistry().map((t) => [t.name, t]));
        const beyond = plan.steps.find((s) => !tools.get(s.tool) || !mayUse(tools.get(s.tool)!, p.scopes));
        if (beyond)
          throw new AppError(
            'forbidden',
            `Step "${beyond.id}" uses ${beyond.tool}, which needs the scope ${beyond.scope}.`,
            {
              scope: beyond.scope,
            },
          );
        const bad = body.approve.flatMap((id, i) =>
          plan.gates.includes(id)
            ? []
            : [{ path: `body.approve.${i}`, message: `"${id}" is not a gated step of this plan` }],
        );
        if (bad.length) throw invalid(bad);
        const row = await insertRun(db, {
          id: jobIdFor(ctx, 'tpr'),
          tenantId: p.tenantId,
          planId: plan.id,
          keyId: p.keyId,
          scopes: p.scopes,
          surface: ctx.state.surface,
          status: body.dry_run ? 'dry_run' : 'running',
          approved: body.approve,
        });
        if (!body.dry_run) {
          await startPlanRun(ctx, {
            goal: plan.goal,
            input: {
              tenantId: p.tenantId,
              runId: row.id,
              steps: plan.steps.map((s) => ({
                id: s.id,
                depends_on: s.depends_on,
                gate: s.gate,
                local: runsLocally(tools.get(s.tool)!),
              })),
              approved: body.approve,
            },
            onStartFailed: () => deleteRun(db, p.tenantId, row.id),
          });
          if (wantsEventStream(ctx)) return streamRun(ctx, row, 0);
        }
        ctx.status = 202;
        return runView(ctx, row, plan);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/tools/plans/runs/:id',
      access: 'key',
      tags,
      summary:
        'A plan run: status, approvals, each step’s status and result. With Accept: text/event-stream its events from Last-Event-ID (or the start).',
      params: RunIdParams,
      headers: ResumeHeaders,
      response: PlanRun,
      produces,
      handler: async (ctx: AppContext, { params, headers }) => {
        const { row, plan } = await runOr404(ctx, params.id);
        if (wantsEventStream(ctx)) return streamRun(ctx, row, lastEventIdOf(ctx, headers['last-event-id']) ?? 0);
        return runView(ctx, row, plan);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/tools/plans/runs/:id/approve',
      access: 'key',
      tags,
      summary:
        'Approve gated steps of a running plan (a workflow update): they start as soon as their dependencies completed.',
      params: RunIdParams,
      body: ApproveBody,
      response: PlanRun,
      responses: { 400: 'A step is not a gated step of this plan.', 409: 'The run has ended or is a dry run.' },
      example: { steps: ['notify'] },
      handler: async (ctx: AppContext, { params, body }) => {
        const { row, plan } = await runOr404(ctx, params.id);
        if (!OPEN.has(row.status)) throw new AppError('conflict', `The plan run is ${row.status}.`);
        const bad = body.steps.flatMap((id, i) =>
          plan.gates.includes(id)
            ? []
            : [{ path: `body.steps.${i}`, message: `"${id}" is not a gated step of this plan` }],
        );
        if (bad.length) throw invalid(bad);
        await addApprovals(ctx.deps.db, row.tenant_id, row.id, body.steps);
        await approvePlanRun(ctx, row.id, body.steps);
        const now = (await getRun(ctx.deps.db, row.tenant_id, row.id)) ?? row;
        return runView(ctx, now, plan);
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/tools/plans/runs/:id',
      access: 'key',
      tags,
      summary:
        'Cancel a plan run: running steps are cancelled, the rest are marked cancelled; an ended run is left as it is.',
      params: RunIdParams,
      response: PlanRun,
      status: 202,
      handler: async (ctx: AppContext, { params }) => {
        const { row, plan } = await runOr404(ctx, params.id);
        if (OPEN.has(row.status)) await cancelPlanRun(ctx, row.id);
        ctx.status = 202;
        return runView(ctx, row, plan);
      },
    }),
  ];
}
