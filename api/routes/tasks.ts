import { appendStep, deleteStep, patchStep } from '../../activities/store/task-steps';
import { createTask, deleteTask, getTask, listTasks, patchTask } from '../../activities/store/tasks';
import { notFound } from '../../schema/errors';
import {
  Step,
  StepCreateBody,
  StepIdParams,
  StepPatchBody,
  Task,
  TaskCreateBody,
  TaskIdParams,
  TaskList,
  TaskListQuery,
  TaskPatchBody,
} from '../../schema/tasks';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { taskExecuteRoutes } from './task-execute';
import { cancelTaskRun } from '../workflow-clients/tasks';

const access = 'key' as const;
const tags = ['tasks'];

/** Task platform: CRUD of tasks and steps (this file) and execution (task-execute.ts). */
export function tasksRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/tasks',
      access,
      tags,
      summary: 'Create a task, optionally with inline steps (a dependency cycle or unknown dependency is 400).',
      body: TaskCreateBody,
      response: Task,
      status: 201,
      example: {
        title: 'Research and report',
        steps: [
          { id: 'get', title: 'Fetch the page', action: 'fetch', args: { url: 'https://example.com' } },
          {
            id: 'sum',
            title: 'Summarize',
            action: 'summarize',
            args: { content: '{{steps.get.result}}' },
            depends_on: ['get'],
          },
        ],
      },
      handler: (ctx: AppContext, { body }) => createTask(ctx.deps.db, { tenantId: principalOf(ctx).tenantId, body }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/tasks',
      access,
      tags,
      summary: 'List tasks (newest first) filtered by status, surface and session_id; limit ≤ 200, with total.',
      query: TaskListQuery,
      response: TaskList,
      handler: async (ctx: AppContext, { query }) => {
        const page = await listTasks(ctx.deps.db, {
          tenantId: principalOf(ctx).tenantId,
          status: query.status,
          surface: query.surface,
          sessionId: query.session_id,
          limit: query.limit,
          offset: query.offset,
        });
        return { ...page, limit: query.limit, offset: query.offset };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/tasks/:id',
      access,
      tags,
      summary: 'A task with its steps.',
      params: TaskIdParams,
      response: Task,
      handler: async (ctx: AppContext, { params }) => {
        const task = await getTask(ctx.deps.db, principalOf(ctx).tenantId, params.id);
        if (!task) throw notFound('Task');
        return task;
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/tasks/:id',
      access,
      tags,
      summary:
        'Update title, description, status, priority, surface, session_id (null clears it) or metadata; an illegal status transition is 409.',
      params: TaskIdParams,
      body: TaskPatchBody,
      response: Task,
      responses: { 409: 'Illegal status transition (see docs/decisions.md).' },
      example: { status: 'cancelled' },
      handler: async (ctx: AppContext, { params, body }) => {
        const { task, previous } = await patchTask(ctx.deps.db, {
          tenantId: principalOf(ctx).tenantId,
          taskId: params.id,
          patch: body,
        });
        if (previous === 'running' && task.status === 'cancelled') await cancelTaskRun(ctx, task.id);
        return task;
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/tasks/:id',
      access,
      tags,
      summary: 'Delete a task and its steps; a running run is cancelled.',
      params: TaskIdParams,
      status: 204,
      handler: async (ctx: AppContext, { params }) => {
        const was = await deleteTask(ctx.deps.db, { tenantId: principalOf(ctx).tenantId, taskId: params.id });
        if (!was) throw notFound('Task');
        if (was === 'running') await cancelTaskRun(ctx, params.id);
        ctx.status = 204;
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/tasks/:id/steps',
      access,
      tags,
      summary: 'Append a step (checked for unknown dependencies and cycles: 400; task running: 409).',
      params: TaskIdParams,
      body: StepCreateBody,
      response: Step,
      status: 201,
      responses: { 409: 'The task is running, or the step id is taken.' },
      example: {
        title: 'Notify',
        action: 'webhook',
        args: { url: 'https://hooks.example.com/x', secret: 's3cret' },
        depends_on: ['sum'],
      },
      handler: (ctx: AppContext, { params, body }) =>
        appendStep(ctx.deps.db, { tenantId: principalOf(ctx).tenantId, taskId: params.id, body }),
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/tasks/:id/steps/:step_id',
      access,
      tags,
      summary: 'Update a step status and/or result (illegal transition or running task: 409).',
      params: StepIdParams,
      body: StepPatchBody,
      response: Step,
      responses: { 409: 'Illegal status transition, or the task is running.' },
      example: { status: 'completed', result: 'done by hand' },
      handler: (ctx: AppContext, { params, body }) =>
        patchStep(ctx.deps.db, {
          tenantId: principalOf(ctx).tenantId,
          taskId: params.id,
          stepId: params.step_id,
          patch: body,
        }),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/tasks/:id/steps/:step_id',
      access,
      tags,
      summary: 'Remove a step (409 when other steps depend on it or the task is running).',
      params: StepIdParams,
      status: 204,
      responses: { 409: 'Other steps depend on this step, or the task is running.' },
      handler: async (ctx: AppContext, { params }) => {
        await deleteStep(ctx.deps.db, {
          tenantId: principalOf(ctx).tenantId,
          taskId: params.id,
          stepId: params.step_id,
        });
        ctx.status = 204;
      },
    }),
    ...taskExecuteRoutes(),
  ];
}
