import { lastEventId } from '../../activities/store/events';
import { stepsOf, taskRow, type TaskRow } from '../../activities/store/tasks';
import { notFound } from '../../schema/errors';
import { ExecutionStatus, TaskIdParams, taskStream, taskWorkflowId } from '../../schema/tasks';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { claimAndStartRun, queryTaskRun } from '../workflow-clients/tasks';
import { lastEventIdOf, pipeEventStream, subscribeStream, wantsEventStream, type StreamFeed } from '../sse';
import { ResumeHeaders } from '../../schema/headers';

async function executionStatus(ctx: AppContext, read: TaskRow, attached?: boolean): Promise<ExecutionStatus> {
  const tenantId = principalOf(ctx).tenantId;
  let row = read;
  let live = row.status === 'running' ? await queryTaskRun(ctx, row.id) : null;
  if (live && live.status !== 'running') {
    // The run reports its end only after the database shows it: the row read before the query is stale.
    row = (await taskRow(ctx.deps.db, tenantId, row.id)) ?? row;
    if (row.status !== 'running') live = null;
  }
  const steps =
    live?.steps ?? (await stepsOf(ctx.deps.db, tenantId, [row.id])).map((s) => ({ id: s.id, status: s.status }));
  const last = await lastEventId(ctx.deps.db, { tenantId, stream: taskStream(row.id) });
  return {
    task_id: row.id,
    workflow_id: taskWorkflowId(row.id),
    run_id: row.run_id,
    status: live && live.status !== 'running' ? live.status : row.status,
    source: live ? 'workflow' : 'database',
    ...(attached === undefined ? {} : { attached }),
    steps,
    last_event_id: last ? String(last) : null,
  };
}

/** Streams the task's execution events after `afterId` until the run's `done` event. */
function streamRun(ctx: AppContext, taskId: string, afterId: number, feed?: StreamFeed): void {
  pipeEventStream(ctx, {
    db: ctx.deps.db,
    tenantId: principalOf(ctx).tenantId,
    stream: taskStream(taskId),
    afterId,
    types: ['step', 'done'],
    toMessage: (row) => ({ data: row.data }),
    isFinal: (row) => row.type === 'done',
    ...(feed ? { feed } : {}),
  });
}

const produces = ['application/json', 'text/event-stream'];

export function taskExecuteRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/tasks/:id/execute',
      access: 'key',
      tags: ['tasks'],
      summary:
        'Run the step DAG (202 with the run status). A running task is attached to, not run twice. With Accept: text/event-stream: ' +
        'one event per step update ({task_id, step_id, status, snippet}) then {done: true, task}; resume with Last-Event-ID (never starts a run).',
      params: TaskIdParams,
      headers: ResumeHeaders,
      response: ExecutionStatus,
      status: 202,
      produces,
      responses: { 503: 'The workflow service is unavailable.' },
      handler: async (ctx: AppContext, { params, headers }) => {
        const tenantId = principalOf(ctx).tenantId;
        const sse = wantsEventStream(ctx);
        const resumeFrom = lastEventIdOf(ctx, headers['last-event-id']);
        if (resumeFrom !== undefined) {
          // A reconnect: continue the stream the client had; never start another run.
          const row = await taskRow(ctx.deps.db, tenantId, params.id);
          if (!row) throw notFound('Task');
          if (sse) return streamRun(ctx, row.id, resumeFrom);
          ctx.status = 202;
          return executionStatus(ctx, row, row.status === 'running');
        }
        // Subscribed before the run can write anything: a new run's events all arrive in notices, so
        // the stream needs no first read (an attached run's earlier events are read back).
        const feed = sse ? subscribeStream(ctx, { tenantId, stream: taskStream(params.id) }) : undefined;
        let claim;
        try {
          // One statement: the claim reads the row too (404 when it is not the tenant's).
          claim = await claimAndStartRun(ctx, tenantId, params.id);
        } catch (err) {
          feed?.unsubscribe();
          throw err;
        }
        const row = claim.task;
        if (feed) {
          if (claim.attached) feed.dirty = true;
          return streamRun(ctx, row.id, claim.floor, feed);
        }
        const now = (await taskRow(ctx.deps.db, tenantId, row.id)) ?? row;
        ctx.status = 202;
        return executionStatus(ctx, now, claim.attached);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/tasks/:id/execute',
      access: 'key',
      tags: ['tasks'],
      summary:
        'Execution status without starting anything: live workflow query while running, the database after. ' +
        "With Accept: text/event-stream: the latest run's events (from Last-Event-ID when given).",
      params: TaskIdParams,
      headers: ResumeHeaders,
      response: ExecutionStatus,
      produces,
      handler: async (ctx: AppContext, { params, headers }) => {
        const row = await taskRow(ctx.deps.db, principalOf(ctx).tenantId, params.id);
        if (!row) throw notFound('Task');
        if (wantsEventStream(ctx))
          return streamRun(ctx, row.id, lastEventIdOf(ctx, headers['last-event-id']) ?? row.run_event_floor);
        return executionStatus(ctx, row);
      },
    }),
  ];
}
