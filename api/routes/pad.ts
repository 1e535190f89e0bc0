import { z } from 'zod';
import { jobIdFor } from '../idempotency';
import {
  deletePadSession,
  getPadSession,
  insertPadSession,
  listPadSessions,
  padStats,
  type PadAgentRow,
} from '../../activities/store/pad';
import { notFound } from '../../schema/errors';
import { ListQuery, PadDispatchBody, PadSession, PadStats } from '../../schema/jobs';
import type { PadAgentInput } from '../../workflows/job-types';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { startPad } from '../workflow-clients/jobs';

const IdParams = z.object({ id: z.string().min(1).max(100) });

async function sessionView(ctx: AppContext, id: string) {
  const found = await getPadSession(ctx.deps.db, principalOf(ctx).tenantId, id);
  if (!found) throw notFound(`PAD session ${id}`);
  const count = (s: PadAgentRow['status']) => found.agents.filter((a) => a.status === s).length;
  return {
    id: found.session.id,
    status: found.session.status,
    max_concurrency: found.session.max_concurrency,
    agents: found.agents.map((a) => ({
      index: a.idx,
      name: a.name,
      lane: a.lane,
      surface: a.surface,
      status: a.status,
      output_id: a.output_id,
      output: a.output,
      error: a.error,
      attempts: a.attempts,
      duration_ms: a.duration_ms,
    })),
    summary: {
      total: found.agents.length,
      queued: count('queued'),
      running: count('running'),
      completed: count('completed'),
      failed: count('failed'),
    },
    created_at: found.session.created_at,
    finished_at: found.session.finished_at,
  };
}

export function padRoutes(): RouteSpec[] {
  const scope = 'key' as const;
  return [
    defineRoute({
      method: 'post',
      path: '/v1/pad/dispatch',
      access: scope,
      tags: ['parallel dispatch'],
      body: PadDispatchBody,
      response: PadSession,
      idempotent: true,
      summary:
        'Dispatch agents in parallel (workflow pad-<id>, at most max_concurrency at once); per-agent results arrive on GET /v1/pad/sessions/{id}. Idempotency-Key supported.',
      example: {
        agents: [
          { name: 'pros', prompt: 'List the pros of remote work.' },
          { name: 'cons', prompt: 'List the cons of remote work.', lane: 'mid' },
        ],
        max_concurrency: 2,
      },
      handler: async (ctx: AppContext, { body }) => {
        const tenantId = principalOf(ctx).tenantId;
        const id = jobIdFor(ctx, 'pad');
        const maxConcurrency = body.max_concurrency ?? 4;
        const agents: PadAgentInput[] = body.agents.map((a, index) => ({
          index,
          name: a.name,
          prompt: a.prompt,
          lane: a.lane ?? 'svc-oracle',
          surface: a.surface ?? ctx.state.surface ?? null,
        }));
        await insertPadSession(ctx.deps.db, { id, tenantId, maxConcurrency, agents });
        await startPad(ctx, { sessionId: id, tenantId, maxConcurrency, agents }, () =>
          deletePadSession(ctx.deps.db, tenantId, id),
        );
        return sessionView(ctx, id);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/pad/sessions',
      access: scope,
      tags: ['parallel dispatch'],
      query: ListQuery,
      summary: 'List dispatch sessions, newest first.',
      handler: async (ctx: AppContext, { query }) => {
        const { rows, total } = await listPadSessions(ctx.deps.db, { tenantId: principalOf(ctx).tenantId, ...query });
        return { object: 'list', data: rows, total, limit: query.limit, offset: query.offset };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/pad/sessions/:id',
      access: scope,
      tags: ['parallel dispatch'],
      params: IdParams,
      response: PadSession,
      summary: 'One dispatch session with per-agent status, outputs and errors as they arrive.',
      handler: (ctx: AppContext, { params }) => sessionView(ctx, params.id),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/pad/stats',
      access: scope,
      tags: ['parallel dispatch'],
      response: PadStats,
      summary:
        'Throughput over the newest 100 sessions: counts, success rate, p50/p95 agent duration, agents per second.',
      handler: async (ctx: AppContext) => {
        const s = await padStats(ctx.deps.db, principalOf(ctx).tenantId, 100);
        const finished = s.agents_completed + s.agents_failed;
        return {
          window_sessions: s.sessions,
          sessions: { running: s.running, completed: s.completed, cancelled: s.cancelled },
          agents: { total: s.agents, completed: s.agents_completed, failed: s.agents_failed },
          success_rate: finished ? s.agents_completed / finished : null,
          duration_ms: { p50: s.p50, p95: s.p95 },
          agents_per_second: finished && s.span_s ? finished / Math.max(s.span_s, 0.001) : null,
        };
      },
    }),
  ];
}
