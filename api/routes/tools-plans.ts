import { getPlan } from '../../activities/store/tool-plans';
import { notFound } from '../../schema/errors';
import { PlanCreateBody, PlanIdParams, ToolPlan } from '../../schema/tools-plans';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { createPlan } from '../plan-service';
import { planRunRoutes } from './tools-runs';

const tags = ['tools'];

/** Tool plans: create (given or model-written) and read; runs in tools-runs.ts. */
export function toolsPlanRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/tools/plan',
      access: 'key',
      tags,
      summary:
        'Create a tool plan: a DAG of tool calls (args may reference earlier results with {{steps.<id>.result.<path>}}), ' +
        'checked against each tool’s schema and the key’s scopes, with approval gates, levels, a critical-path estimate and a dry-run preview. ' +
        'Without `steps` the model writes it (JSON-schema output, one repair round). Stored; honours Idempotency-Key.',
      body: PlanCreateBody,
      idempotent: true,
      response: ToolPlan,
      status: 201,
      responses: {
        400: 'Invalid plan: details carry JSON pointers (e.g. /steps/1/args/url), unknown tools, cycles (named a → b → a).',
        403: 'A step uses a tool beyond the key’s scopes.',
        502: 'The model failed or wrote an invalid plan twice.',
      },
      example: {
        goal: 'Fetch two pages and compare their token counts',
        steps: [
          { id: 'a', tool: 'web_fetch', args: { url: 'https://example.com/a' } },
          { id: 'b', tool: 'web_fetch', args: { url: 'https://example.com/b' } },
          {
            id: 'diff',
            tool: 'calculator',
            args: { expression: '{{steps.a.result.token_estimate}} - {{steps.b.result.token_estimate}}' },
          },
        ],
      },
      handler: async (ctx: AppContext, { body }) => {
        ctx.status = 201;
        return createPlan(ctx, body);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/tools/plans/:id',
      access: 'key',
      tags,
      summary: 'A stored tool plan (another tenant’s id answers 404).',
      params: PlanIdParams,
      response: ToolPlan,
      handler: async (ctx: AppContext, { params }) => {
        const plan = await getPlan(ctx.deps.db, principalOf(ctx).tenantId, params.id);
        if (!plan) throw notFound('Plan');
        return plan;
      },
    }),
    ...planRunRoutes(),
  ];
}
