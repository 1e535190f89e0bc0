import { z } from 'zod';
import { draftAgent } from '../../activities/agents/vibe';
import {
  agentDefView,
  createAgentDef,
  deleteAgentDef,
  getAgentDef,
  listAgentDefs,
} from '../../activities/agents/store';
import { toolsFor } from '../../activities/tools/registry';
import {
  AgentDefinition,
  AgentList,
  AgentParams,
  AgentRunBody,
  AgentRunParams,
  AgentRunState,
  VibeBody,
} from '../../schema/agents';
import { notFound } from '../../schema/errors';
import { IdempotencyHeaders, ResumeHeaders } from '../../schema/headers';
import { streams } from '../../schema/workflow-ids';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { lastEventIdOf, pipeJobEvents } from '../sse';
import { withIdempotency } from '../idempotency';
import { modelsFor } from './chat-shared';
import { FINAL, cancelRun, createRun, runState, waitForRun, workspaceToolNames } from './agents-run-core';

const access = { scope: 'runtime:chat' } as const;

async function createVibe(ctx: AppContext, description: string) {
  const p = principalOf(ctx);
  const { draft, dropped } = await draftAgent(modelsFor(ctx), {
    description,
    tools: toolsFor(p.scopes),
    extraTools: p.scopes.includes('runtime:workspaces') ? workspaceToolNames(ctx.deps.config) : [],
  });
  return agentDefView(await createAgentDef(ctx.deps.db, { tenantId: p.tenantId, description, draft, dropped }));
}

/** Agent runs (POST /v1/capabilities/agent, workflow agent-<id>) and stored agent definitions (vibe). */
export function agentsRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/capabilities/agent',
      access,
      tags: ['capabilities'],
      summary:
        'Start an agent run: a deterministic classifier picks the tier (lane, tools, steps, tokens); the run is a durable function-calling loop, or is handed to the configured delegate for code changes (is_delegated, pr_link). 202, or 200 when it ends within wait_s. Honours Idempotency-Key.',
      body: AgentRunBody,
      headers: IdempotencyHeaders,
      status: 202,
      response: AgentRunState,
      responses: {
        200: 'The run finished within wait_s: the final state with the answer.',
        403: 'A requested tool needs a scope the key lacks.',
        404: 'agent_id names no agent of this tenant.',
        503: 'The run could not be started (Temporal unavailable).',
      },
      example: { query: 'What is 17 * 23, and what weekday is 2026-01-01?', max_steps: 4, wait_s: 30 },
      handler: async (ctx: AppContext, { body, headers }) => {
        const started = await createRun(ctx, body, 'agent', headers['idempotency-key']);
        const state = await waitForRun(ctx, started.id, 'agent', body.wait_s);
        ctx.status = FINAL.has(state.status) ? 200 : 202;
        ctx.body = state;
        return undefined;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/capabilities/agent/:id',
      access,
      tags: ['capabilities'],
      summary: 'Poll an agent run: status, tier, steps (each with its stored output id), sources, usage, answer.',
      params: AgentRunParams,
      response: AgentRunState,
      handler: async (ctx: AppContext, { params }) => runState(ctx, params.id, 'agent'),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/capabilities/agent/:id/events',
      access,
      tags: ['capabilities'],
      summary: 'Progress as SSE (started, turn, tool, delegated, done) with event ids; resume with Last-Event-ID.',
      params: AgentRunParams,
      headers: ResumeHeaders,
      produces: ['text/event-stream'],
      handler: async (ctx: AppContext, { params, headers }) => {
        await runState(ctx, params.id, 'agent');
        pipeJobEvents(ctx, {
          tenantId: principalOf(ctx).tenantId,
          stream: streams.agent(params.id),
          afterId: lastEventIdOf(ctx, headers['last-event-id']) ?? 0,
        });
        return undefined;
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/capabilities/agent/:id',
      access,
      tags: ['capabilities'],
      summary: 'Cancel a running agent run.',
      params: AgentRunParams,
      status: 202,
      response: AgentRunState,
      responses: { 409: 'The run has already finished.' },
      handler: async (ctx: AppContext, { params }) => cancelRun(ctx, params.id, 'agent'),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/agents/vibe',
      access,
      tags: ['agents'],
      summary:
        'Create an agent definition from a description: written by the model under a JSON schema, validated (only real tools the key may use; others are dropped and listed), stored for the tenant.',
      body: VibeBody,
      // Idempotency-Key honoured inside, like the other capability creates (not the route flag).
      headers: IdempotencyHeaders,
      status: 201,
      metered: true,
      response: AgentDefinition,
      responses: { 502: 'The model gave no valid definition after one repair round.' },
      example: { description: 'An agent that checks arithmetic in invoices and reports the wrong lines.' },
      handler: async (ctx: AppContext, { body, headers }) =>
        withIdempotency(
          ctx,
          'POST /v1/agents/vibe',
          body,
          () => createVibe(ctx, body.description),
          headers['idempotency-key'],
        ),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agents',
      access,
      tags: ['agents'],
      summary: "The tenant's agent definitions, newest first (at most 200).",
      response: AgentList,
      handler: async (ctx: AppContext) => ({
        data: (await listAgentDefs(ctx.deps.db, principalOf(ctx).tenantId)).map(agentDefView),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agents/:id',
      access,
      tags: ['agents'],
      summary: 'One agent definition.',
      params: AgentParams,
      response: AgentDefinition,
      handler: async (ctx: AppContext, { params }) => {
        const row = await getAgentDef(ctx.deps.db, principalOf(ctx).tenantId, params.id);
        if (!row) throw notFound(`Agent ${params.id}`);
        return agentDefView(row);
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/agents/:id',
      access,
      tags: ['agents'],
      summary: 'Delete an agent definition (runs already started keep their copy of it).',
      params: AgentParams,
      response: z.object({ id: z.string(), deleted: z.literal(true) }),
      handler: async (ctx: AppContext, { params }) => {
        if (!(await deleteAgentDef(ctx.deps.db, principalOf(ctx).tenantId, params.id)))
          throw notFound(`Agent ${params.id}`);
        return { id: params.id, deleted: true as const };
      },
    }),
  ];
}
