import { z } from 'zod';
import { liveScheduleId } from '../../workers/live-schedule';
import type { AppContext } from '../context';
import { browserQueue } from '../../activities/browser/availability';
import { listBrowserWorkers } from '../../activities/store/browser-workers';
import { browserWorkerCount } from '../browser-client';
import { liveSocketOf } from '../live/socket';
import { defineRoute, type RouteSpec } from '../route';

const DEADLINE_MS = 3000;

const Schedule = z.object({
  id: z.string(),
  status: z.enum(['ok', 'paused', 'failing', 'missing', 'unreachable']),
  last_run: z.string().nullable(),
  next_run: z.string().nullable(),
  recent_failures: z.number().int().describe('Failed, timed-out or terminated runs among the last 5.'),
});
const Queue = z.object({
  task_queue: z.string(),
  kind: z.enum(['workflow', 'activity']),
  status: z.enum(['up', 'down', 'unreachable']),
  pollers: z.array(
    z.object({ identity: z.string(), last_access: z.string().nullable(), age_s: z.number().nullable() }),
  ),
});
const BrowserPool = z
  .object({
    status: z
      .enum(['up', 'down', 'absent'])
      .describe(
        'up: a fresh worker report and pollers; down: workers reported lately but none is alive; absent: none.',
      ),
    task_queue: z.string(),
    pollers: z.number().int().describe("Pollers of the shared browser queue (Temporal's view)."),
    capacity: z.number().int().describe('Sessions the live workers can hold together.'),
    sessions_open: z.number().int(),
    workers: z.array(
      z.object({
        worker_id: z.string(),
        status: z.enum(['up', 'stale']),
        chromium_version: z.string().nullable(),
        sessions_open: z.number().int(),
        capacity: z.number().int(),
        started_at: z.string(),
        last_seen: z.string(),
      }),
    ),
  })
  .meta({ id: 'BrowserPool' });
const DaemonsResponse = z
  .object({
    status: z.enum(['ok', 'degraded']),
    schedules: z.array(Schedule),
    workers: z.array(Queue),
    listeners: z.array(z.object({ name: z.string(), status: z.enum(['up', 'down', 'not_attached']) })),
    browser_pool: BrowserPool,
  })
  .meta({ id: 'DaemonsResponse' });

async function scheduleHealth(ctx: AppContext, id: string): Promise<z.infer<typeof Schedule>> {
  const { client, connection } = ctx.deps.temporal;
  try {
    const d = await connection.withDeadline(Date.now() + DEADLINE_MS, () => client.schedule.getHandle(id).describe());
    const recent = d.info.recentActions.slice(-5);
    const statuses = await Promise.all(
      recent.map((a) =>
        connection
          .withDeadline(Date.now() + DEADLINE_MS, () =>
            client.workflow.getHandle(a.action.workflow.workflowId, a.action.workflow.firstExecutionRunId).describe(),
          )
          .then((w) => w.status.name)
          .catch(() => 'UNKNOWN'),
      ),
    );
    const failures = statuses.filter((s) => s === 'FAILED' || s === 'TIMED_OUT' || s === 'TERMINATED').length;
    const last = recent.at(-1);
    return {
      id,
      status: d.state.paused
        ? 'paused'
        : failures > 0 && statuses.at(-1) !== 'COMPLETED' && statuses.at(-1) !== 'RUNNING'
          ? 'failing'
          : 'ok',
      last_run: last ? last.takenAt.toISOString() : null,
      next_run: d.info.nextActionTimes[0]?.toISOString() ?? null,
      recent_failures: failures,
    };
  } catch (err) {
    const missing = (err as Error).name === 'ScheduleNotFoundError';
    return { id, status: missing ? 'missing' : 'unreachable', last_run: null, next_run: null, recent_failures: 0 };
  }
}

async function queueHealth(
  ctx: AppContext,
  name: string,
  kind: 'workflow' | 'activity',
): Promise<z.infer<typeof Queue>> {
  const { connection } = ctx.deps.temporal;
  try {
    const r = await connection.withDeadline(Date.now() + DEADLINE_MS, () =>
      connection.workflowService.describeTaskQueue({
        namespace: ctx.deps.config.temporal.namespace,
        taskQueue: { name },
        taskQueueType: kind === 'workflow' ? 1 : 2, // TASK_QUEUE_TYPE_WORKFLOW / _ACTIVITY
      }),
    );
    const now = Date.now();
    const pollers = (r.pollers ?? []).map((p) => {
      const ms =
        p.lastAccessTime?.seconds != null
          ? Number(p.lastAccessTime.seconds) * 1000 + Math.floor((p.lastAccessTime.nanos ?? 0) / 1e6)
          : null;
      return {
        identity: p.identity ?? '',
        last_access: ms ? new Date(ms).toISOString() : null,
        age_s: ms ? Math.max(0, Math.round((now - ms) / 1000)) : null,
      };
    });
    const up = pollers.some((p) => p.age_s !== null && p.age_s < ctx.deps.config.daemons.pollerFreshS);
    return { task_queue: name, kind, status: up ? 'up' : 'down', pollers };
  } catch {
    return { task_queue: name, kind, status: 'unreachable', pollers: [] };
  }
}

/** A worker reports every heartbeat interval (default 15 s): three missed reports make it stale. */
const WORKER_FRESH_S = 45;

async function browserPool(ctx: AppContext): Promise<z.infer<typeof BrowserPool>> {
  const queue = browserQueue(ctx.deps.config.temporal.taskQueue);
  const fresh = Math.max(WORKER_FRESH_S, 3 * ctx.deps.config.browser.heartbeatS);
  const [pollers, rows] = await Promise.all([browserWorkerCount(ctx, queue), listBrowserWorkers(ctx.deps.db, 600)]);
  const workers = rows.map((r) => ({
    worker_id: r.worker_id,
    status: r.age_s <= fresh ? ('up' as const) : ('stale' as const),
    chromium_version: r.chromium_version,
    sessions_open: r.sessions_open,
    capacity: r.capacity,
    started_at: r.started_at,
    last_seen: r.seen_at,
  }));
  const up = workers.filter((w) => w.status === 'up');
  return {
    status: up.length > 0 && pollers > 0 ? 'up' : workers.length > 0 || pollers > 0 ? 'down' : 'absent',
    task_queue: queue,
    pollers,
    capacity: up.reduce((n, w) => n + w.capacity, 0),
    sessions_open: up.reduce((n, w) => n + w.sessions_open, 0),
    workers,
  };
}

/** GET /v1/daemons: the health of every background process this deployment relies on. */
export function daemonsRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/daemons',
      access: 'key',
      summary:
        'Background daemon health: Temporal schedules (last/next run, failures), worker pollers per task queue, LISTEN connections, the browser pool.',
      tags: ['system'],
      response: DaemonsResponse,
      handler: async (ctx: AppContext) => {
        const queue = ctx.deps.config.temporal.taskQueue;
        const [schedule, wf, act, pool] = await Promise.all([
          scheduleHealth(ctx, liveScheduleId(queue)),
          queueHealth(ctx, queue, 'workflow'),
          queueHealth(ctx, queue, 'activity'),
          browserPool(ctx),
        ]);
        const live = liveSocketOf(ctx.deps);
        const listeners = [
          {
            name: 'live-notify',
            status: live ? (live.listener.connected ? ('up' as const) : ('down' as const)) : ('not_attached' as const),
          },
        ];
        const ok =
          schedule.status === 'ok' &&
          wf.status === 'up' &&
          act.status === 'up' &&
          listeners.every((l) => l.status !== 'down') &&
          pool.status !== 'down';
        return {
          status: ok ? 'ok' : 'degraded',
          schedules: [schedule],
          workers: [wf, act],
          listeners,
          browser_pool: pool,
        };
      },
    }),
  ];
}
