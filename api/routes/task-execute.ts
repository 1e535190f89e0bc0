import { WorkflowNotFoundError } from '@temporalio/client';
import { lastEventId } from '../../activities/store/events';
import { claimTaskRun, releaseTaskRun } from '../../activities/store/task-runs';
import { stepsOf, taskRow, type TaskRow } from '../../activities/store/tasks';
import { notFound } from '../../schema/errors';
import {
  ExecutionStatus,
  TaskIdParams,
  taskStream,
  taskWorkflowId,
  type TaskRunState,
} from '../../schema/tasks';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { shortTemporalCall, startJobWorkflow } from '../start-workflow';
import { lastEventIdOf, pipeEventStream, wantsEventStream } from '../sse';
import { ResumeHeaders } from '../../schema/headers';

/** Cancels a task's workflow; a run that already ended (or never started) is fine. */
export async function cancelTaskWorkflow(ctx: AppContext, taskId: string): Promise<void> {
  try {
    const handle = ctx.deps.temporal.client.workflow.getHandle(taskWorkflowId(taskId));
    // Bounded: with Temporal unreachable the database change stands and the run's activities stop on
    // their own (StaleRunError: the run no longer owns the task).
    await shortTemporalCall(ctx, 'cancel the task', () => handle.cancel());
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return;
    ctx.deps.log.warn({ err: (err as Error).message, task_id: taskId }, 'could not cancel the task workflow');
  }
}

async function liveState(ctx: AppContext, taskId: string): Promise<TaskRunState | null> {
  const handle = ctx.deps.temporal.client.workflow.getHandle(taskWorkflowId(taskId));
  try {
    return await shortTemporalCall(ctx, 'query the task', () => handle.query<TaskRunState>('taskStatus'));
  } catch {
    return null; // no worker answering right now, or the run just ended: the database answers
  }
}

async function executionStatus(ctx: AppContext, row: TaskRow, attached?: boolean): Promise<ExecutionStatus> {
  const tenantId = principalOf(ctx).tenantId;
  const live = row.status === 'running' ? await liveState(ctx, row.id) : null;
  const steps = live?.steps ?? (await stepsOf(ctx.deps.db, tenantId, [row.id])).map((s) => ({ id: s.id, status: s.status }));
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
function streamRun(ctx: AppContext, taskId: string, afterId: number): void {
  pipeEventStream(ctx, {
    db: ctx.deps.db,
    tenantId: principalOf(ctx).tenantId,
    stream: taskStream(taskId),
    afterId,
    types: ['step', 'done'],
    toMessage: (row) => ({ data: row.data }),
    isFinal: (row) => row.type === 'done',
  });
}

async function startRun(ctx: AppContext, row: TaskRow, previous: TaskRow['status']): Promise<void> {
  const tenantId = principalOf(ctx).tenantId;
  await startJobWorkflow(ctx, {
    workflow: 'taskDagWorkflow',
    workflowId: taskWorkflowId(row.id),
    kind: 'task',
    tenantId,
    title: row.title,
    args: [{ tenantId, taskId: row.id }],
    surface: row.surface ?? undefined,
    // The database claim already decided that no run owns the task: a leftover execution
    // (e.g. a cancelled run still cleaning up) is replaced, never joined.
    idConflictPolicy: 'TERMINATE_EXISTING',
    idReusePolicy: 'ALLOW_DUPLICATE',
    onStartFailed: () => releaseTaskRun(ctx.deps.db, { tenantId, taskId: row.id, previous }),
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
        const row = await taskRow(ctx.deps.db, tenantId, params.id);
        if (!row) throw notFound('Task');
        if (resumeFrom !== undefined) {
          // A reconnect: continue the stream the client had; never start another run.
          if (sse) return streamRun(ctx, row.id, resumeFrom);
          ctx.status = 202;
          return executionStatus(ctx, row, row.status === 'running');
        }
        const claim = await claimTaskRun(ctx.deps.db, { tenantId, taskId: row.id });
        if (!claim.attached) await startRun(ctx, row, claim.previous);
        if (sse) return streamRun(ctx, row.id, claim.floor);
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
        'With Accept: text/event-stream: the latest run\'s events (from Last-Event-ID when given).',
      params: TaskIdParams,
      headers: ResumeHeaders,
      response: ExecutionStatus,
      produces,
      handler: async (ctx: AppContext, { params, headers }) => {
        const row = await taskRow(ctx.deps.db, principalOf(ctx).tenantId, params.id);
        if (!row) throw notFound('Task');
        if (wantsEventStream(ctx)) return streamRun(ctx, row.id, lastEventIdOf(ctx, headers['last-event-id']) ?? row.run_event_floor);
        return executionStatus(ctx, row);
      },
    }),
  ];
}
