import { createResearch, getResearch, researchView, updateResearch } from '../../activities/store/research';
import { AppError, notFound } from '../../schema/errors';
import { IdempotencyHeaders, ResumeHeaders } from '../../schema/headers';
import { RESEARCH_DEPTHS, ResearchBody, ResearchParams, ResearchState } from '../../schema/research';
import { principalOf, type AppContext } from '../context';
import { jobIdFor, withIdempotency } from '../idempotency';
import { defineRoute, type RouteSpec } from '../route';
import { cancelResearch, startResearch } from '../workflow-clients/knowledge';
import { streams } from '../../schema/workflow-ids';
import { lastEventIdOf, pipeJobEvents } from '../sse';

const access = { scope: 'runtime:chat' } as const;
const tags = ['capabilities'];
const FINAL = new Set(['completed', 'failed', 'cancelled']);

async function stateOf(ctx: AppContext, id: string) {
  const row = await getResearch(ctx.deps.db, principalOf(ctx).tenantId, id);
  if (!row) throw notFound(`Research job ${id}`);
  return researchView(row);
}

/** Research jobs (workflow research-<id>): start, poll, stream progress, cancel. */
export function researchRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/capabilities/research',
      access,
      tags,
      summary:
        'Start a durable research job: plan, search, fetch sources, write a report whose every citation is verified against a fetched source. 202, or 200 with the report when it ends within wait_s. Honours Idempotency-Key.',
      body: ResearchBody,
      headers: IdempotencyHeaders,
      status: 202,
      response: ResearchState,
      responses: {
        200: 'The job finished within wait_s: the final state with the report.',
        503: 'The job could not be started (Temporal unavailable).',
      },
      example: { query: 'How do alpine marmots survive winter?', depth: 'standard', wait_s: 30 },
      handler: async (ctx: AppContext, { body, headers }) => {
        const { tenantId } = principalOf(ctx);
        const { db } = ctx.deps;
        const started = await withIdempotency(
          ctx,
          'POST /v1/capabilities/research',
          body,
          async () => {
            const row = await createResearch(db, {
              id: jobIdFor(ctx, 'res'),
              tenantId,
              query: body.query,
              depth: body.depth,
              maxSources: body.max_sources ?? RESEARCH_DEPTHS[body.depth].sources,
            });
            await startResearch(ctx, { tenantId, jobId: row.id, query: body.query }, () =>
              updateResearch(db, tenantId, row.id, { status: 'failed', error: 'The job could not be started.' }),
            );
            return researchView(row);
          },
          headers['idempotency-key'],
        );
        let state = await stateOf(ctx, started.id);
        const deadline = Date.now() + body.wait_s * 1000;
        while (!FINAL.has(state.status) && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 200));
          state = await stateOf(ctx, started.id);
        }
        ctx.status = FINAL.has(state.status) ? 200 : 202;
        ctx.body = state;
        return undefined;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/capabilities/research/:id',
      access,
      tags,
      summary: 'Poll a research job: status, stage, plan, sources with their fetch status, and the report when done.',
      params: ResearchParams,
      response: ResearchState,
      handler: async (ctx: AppContext, { params }) => stateOf(ctx, params.id),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/capabilities/research/:id/events',
      access,
      tags,
      summary:
        'Progress as SSE (plan, sources, source.fetched, source.failed, done) with event ids; resume with Last-Event-ID.',
      params: ResearchParams,
      headers: ResumeHeaders,
      produces: ['text/event-stream'],
      handler: async (ctx: AppContext, { params, headers }) => {
        await stateOf(ctx, params.id);
        pipeJobEvents(ctx, {
          tenantId: principalOf(ctx).tenantId,
          stream: streams.research(params.id),
          afterId: lastEventIdOf(ctx, headers['last-event-id']) ?? 0,
        });
        return undefined;
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/capabilities/research/:id',
      access,
      tags,
      summary: 'Cancel a running research job.',
      params: ResearchParams,
      status: 202,
      response: ResearchState,
      responses: { 409: 'The job has already finished.' },
      handler: async (ctx: AppContext, { params }) => {
        const state = await stateOf(ctx, params.id);
        if (FINAL.has(state.status))
          throw new AppError('conflict', `Research job ${params.id} has already finished (${state.status}).`);
        await cancelResearch(ctx, params.id);
        return stateOf(ctx, params.id);
      },
    }),
  ];
}
