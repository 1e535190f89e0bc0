import { z } from 'zod';
import { jobIdFor } from '../idempotency';
import { outputsById } from '../../activities/store/job-outputs';
import { deleteSwarmRun, getSwarmRun, insertSwarmRun } from '../../activities/store/swarm';
import { AppError, invalid, notFound, zodDetails } from '../../schema/errors';
import {
  SWARM_OPERATION_NAMES,
  SWARM_OPERATIONS,
  SwarmRunBody,
  SwarmRunRecord,
  type SwarmOperation,
} from '../../schema/jobs';
import { swarmStepCount } from '../../workflows/job-rules';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { startSwarm } from '../workflow-clients/jobs';

const IdParams = z.object({ id: z.string().min(1).max(100) });

/** Every `*output_id` in a result, so the run view can carry the full texts. */
function outputIds(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) v.forEach((x) => outputIds(x, out));
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k.endsWith('output_id') && typeof x === 'string') out.push(x);
      else outputIds(x, out);
    }
  }
  return out;
}

export function swarmRoutes(): RouteSpec[] {
  const scope = 'key' as const;
  return [
    defineRoute({
      method: 'post',
      path: '/v1/swarm/run',
      access: scope,
      tags: ['swarm'],
      body: SwarmRunBody,
      response: SwarmRunRecord,
      idempotent: true,
      summary: `Start a swarm run (workflow swarm-<id>). Operations: ${SWARM_OPERATION_NAMES.join(', ')}; params are validated per operation. Poll GET /v1/swarm/runs/{id}. Idempotency-Key supported.`,
      example: {
        operation: 'vote',
        params: { question: 'Is Rust or Go better for a CLI tool?', voters: 3, options: ['Rust', 'Go'] },
      },
      handler: async (ctx: AppContext, { body }) => {
        if (!(SWARM_OPERATION_NAMES as string[]).includes(body.operation)) {
          throw new AppError(
            'invalid_request',
            `Unknown swarm operation "${body.operation}"; valid operations: ${SWARM_OPERATION_NAMES.join(', ')}.`,
            {
              details: [{ path: 'body.operation', message: `must be one of ${SWARM_OPERATION_NAMES.join(', ')}` }],
            },
          );
        }
        const op = body.operation as SwarmOperation;
        const parsed = SWARM_OPERATIONS[op].safeParse(body.params);
        if (!parsed.success) throw invalid(zodDetails(parsed.error.issues, 'body.params'), `params for ${op}`);
        const tenantId = principalOf(ctx).tenantId;
        const id = jobIdFor(ctx, 'swarm');
        const params = parsed.data as Record<string, unknown>;
        const row = await insertSwarmRun(ctx.deps.db, {
          id,
          tenantId,
          operation: op,
          params,
          total: swarmStepCount(op, params),
        });
        await startSwarm(ctx, { runId: id, tenantId, operation: op, params }, () =>
          deleteSwarmRun(ctx.deps.db, tenantId, id),
        );
        return { ...row, run_id: id, outputs: {} };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/swarm/runs/:id',
      access: scope,
      tags: ['swarm'],
      params: IdParams,
      response: SwarmRunRecord,
      summary: 'Poll a swarm run: status, progress, result (with output ids) and the full outputs by id.',
      handler: async (ctx: AppContext, { params }) => {
        const tenantId = principalOf(ctx).tenantId;
        const row = await getSwarmRun(ctx.deps.db, tenantId, params.id);
        if (!row) throw notFound(`Swarm run ${params.id}`);
        const outputs = await outputsById(ctx.deps.db, tenantId, outputIds(row.result));
        return { ...row, outputs: Object.fromEntries(outputs) };
      },
    }),
  ];
}
