import { z } from 'zod';
import { getGoalRow } from '../../activities/store/goals';
import { getPadSession } from '../../activities/store/pad';
import { getSwarmRun } from '../../activities/store/swarm';
import { notFound } from '../../schema/errors';
import { ResumeHeaders } from '../../schema/headers';
import { isTerminal } from '../../workflows/job-rules';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { lastEventIdOf, pipeEventStream } from '../sse';

const IdParams = z.object({ id: z.string().min(1).max(100) });

/** One durable job family whose activities write progress events to `<prefix>:<id>`. */
interface JobStream {
  path: string;
  what: string;
  prefix: string;
  tags: string[];
  exists: (ctx: AppContext, tenantId: string, id: string) => Promise<unknown>;
  /** The event type whose terminal status ends the stream. */
  finalType: string;
}

const STREAMS: JobStream[] = [
  {
    path: '/v1/goals/:id/events',
    what: 'Goal',
    prefix: 'goal',
    tags: ['goals'],
    finalType: 'goal.state',
    exists: (ctx, t, id) => getGoalRow(ctx.deps.db, t, 'goal', id),
  },
  {
    path: '/v1/sovereign/goals/:id/events',
    what: 'Sovereign goal',
    prefix: 'goal',
    tags: ['sovereign goals'],
    finalType: 'goal.state',
    exists: (ctx, t, id) => getGoalRow(ctx.deps.db, t, 'sovereign', id),
  },
  {
    path: '/v1/pad/sessions/:id/events',
    what: 'Dispatch session',
    prefix: 'pad',
    tags: ['parallel dispatch'],
    finalType: 'session.state',
    exists: (ctx, t, id) => getPadSession(ctx.deps.db, t, id),
  },
  {
    path: '/v1/swarm/runs/:id/events',
    what: 'Swarm run',
    prefix: 'swarm',
    tags: ['swarm'],
    finalType: 'run.state',
    exists: (ctx, t, id) => getSwarmRun(ctx.deps.db, t, id),
  },
];

/**
 * Progress events of goals, sovereign goals, PAD sessions and swarm runs as SSE (issue 10: the
 * activities wrote them and nothing read them). Each event has its id (resume with Last-Event-ID)
 * and `event:` its type (step.started, step.completed, step.failed, goal.state, agent.state,
 * session.state, run.state); the stream ends after the state event with a terminal status.
 */
export function jobEventRoutes(): RouteSpec[] {
  return STREAMS.map((s) =>
    defineRoute({
      method: 'get',
      path: s.path,
      access: 'key',
      tags: s.tags,
      summary: `${s.what} progress as server-sent events (ids for Last-Event-ID resume); ends when it reaches a terminal status.`,
      params: IdParams,
      headers: ResumeHeaders,
      produces: ['text/event-stream'],
      handler: async (ctx: AppContext, { params, headers }) => {
        const tenantId = principalOf(ctx).tenantId;
        if (!(await s.exists(ctx, tenantId, params.id))) throw notFound(s.what);
        pipeEventStream(ctx, {
          db: ctx.deps.db,
          tenantId,
          stream: `${s.prefix}:${params.id}`,
          afterId: lastEventIdOf(ctx, headers['last-event-id']) ?? 0,
          toMessage: (row) => ({ event: row.type, data: row.data }),
          isFinal: (row) => row.type === s.finalType && isTerminal(String((row.data as { status?: unknown }).status)),
        });
      },
    }),
  );
}
