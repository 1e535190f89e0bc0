import { z } from 'zod';
import { agentsSettings } from '../../activities/agents/config';
import { sandboxStatus } from '../../activities/agents/sandbox';
import { AgentRunParams, AgentRunState, WorkspaceRunBody } from '../../schema/agents';
import { IdempotencyHeaders, ResumeHeaders } from '../../schema/headers';
import { streams } from '../../schema/workflow-ids';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { lastEventIdOf, pipeJobEvents } from '../sse';
import { cancelRun, createRun, runState, workspaceToolNames } from './agents-run-core';

const access = { scope: 'runtime:workspaces' } as const;
const tags = ['workspaces'];

const WorkspaceHealth = z.object({
  tools: z.array(z.string()).describe('Workspace tools a run is offered here.'),
  shell: z.object({ available: z.boolean(), reason: z.string() }),
  keep: z.enum(['never', 'always', 'on_failure']).describe('What happens to a run folder when the run ends.'),
});

function streamRun(ctx: AppContext, id: string, afterId: number) {
  return pipeJobEvents(ctx, { tenantId: principalOf(ctx).tenantId, stream: streams.agent(id), afterId });
}

/** Workspace runs: an agent run with its own scratch folder, file tools confined to it and (where bwrap works) a sandboxed shell. */
export function workspacesRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/workspaces/run',
      access,
      tags,
      summary:
        'Run an agent task in an isolated workspace (own scratch folder; file_list/file_read/file_write confined to it; a no-network, CPU/memory/time-capped shell where bwrap works). Answers an SSE stream (a `run` event with the id, then started, turn, tool, done with ids; resume on GET .../events with Last-Event-ID); with `Accept: application/json` a 202 with the run. Honours Idempotency-Key.',
      body: WorkspaceRunBody,
      headers: IdempotencyHeaders,
      status: 200,
      produces: ['text/event-stream', 'application/json'],
      response: AgentRunState,
      responses: {
        202: 'With Accept: application/json: the run was started.',
        403: 'The key lacks runtime:workspaces, or a requested tool needs a scope the key lacks.',
      },
      example: { query: 'Write hello.txt with a greeting, then list the folder.', max_steps: 4 },
      handler: async (ctx: AppContext, { body, headers }) => {
        const state = await createRun(ctx, body, 'workspace', headers['idempotency-key']);
        ctx.set('Location', `/v1/workspaces/runs/${state.id}`);
        const accept = (ctx.get('Accept') ?? '').toLowerCase();
        if (accept.includes('application/json') && !accept.includes('text/event-stream')) {
          ctx.status = 202;
          ctx.body = state;
          return undefined;
        }
        const sse = streamRun(ctx, state.id, 0);
        // Before any stored event (the reader's first query is still pending): the id to resume with.
        sse.send({ event: 'run', data: { id: state.id } });
        return undefined;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/workspaces/health',
      access,
      tags,
      summary: 'Whether workspace runs get a sandboxed shell here, and why not when they do not.',
      response: WorkspaceHealth,
      handler: async (ctx: AppContext) => ({
        tools: workspaceToolNames(ctx.deps.config),
        shell: sandboxStatus(),
        keep: agentsSettings(ctx.deps.config).workspaces.keep,
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/workspaces/runs/:id',
      access,
      tags,
      summary: 'Poll a workspace run (same shape as an agent run).',
      params: AgentRunParams,
      response: AgentRunState,
      handler: async (ctx: AppContext, { params }) => runState(ctx, params.id, 'workspace'),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/workspaces/runs/:id/events',
      access,
      tags,
      summary: 'The run as SSE with event ids; resume with Last-Event-ID.',
      params: AgentRunParams,
      headers: ResumeHeaders,
      produces: ['text/event-stream'],
      handler: async (ctx: AppContext, { params, headers }) => {
        await runState(ctx, params.id, 'workspace');
        streamRun(ctx, params.id, lastEventIdOf(ctx, headers['last-event-id']) ?? 0);
        return undefined;
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/workspaces/runs/:id',
      access,
      tags,
      summary: 'Cancel a workspace run: its shell commands are killed, its folder removed unless kept.',
      params: AgentRunParams,
      status: 202,
      response: AgentRunState,
      responses: { 409: 'The run has already finished.' },
      handler: async (ctx: AppContext, { params }) => cancelRun(ctx, params.id, 'workspace'),
    }),
  ];
}
