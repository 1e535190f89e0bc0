import { classifyQuery, tierFor } from '../../activities/agents/classify';
import { agentsSettings } from '../../activities/agents/config';
import { agentRunView } from '../../activities/agents/outputs';
import { sandboxStatus } from '../../activities/agents/sandbox';
import { agentOutputs, createAgentRun, getAgentDef, getAgentRun, updateAgentRun } from '../../activities/agents/store';
import { WORKSPACE_BROWSER_TOOL_NAMES } from '../../activities/agents/workspace-browser';
import { WORKSPACE_TOOL_NAMES } from '../../activities/agents/workspace-tools';
import { chromiumMissing } from '../../activities/browser/availability';
import { mayUse, toolRegistry, toolsFor } from '../../activities/tools/registry';
import type { AgentRunBody, AgentRunState, WorkspaceRunBody } from '../../schema/agents';
import { ConfigError, type Config } from '../../schema/config';
import { AppError, invalid, notFound } from '../../schema/errors';
import { principalOf, type AppContext } from '../context';
import { jobIdFor, withIdempotency } from '../idempotency';
import { cancelAgentRun, startAgentRun } from '../workflow-clients/agents';

export const FINAL = new Set(['completed', 'failed', 'cancelled']);

/**
 * Workspace tools a run may be offered: the files always, `shell` only where the sandbox works, the
 * browser tools bound to the run's own session only where Chromium is configured.
 */
export function workspaceToolNames(config: Config): string[] {
  return [
    ...WORKSPACE_TOOL_NAMES.filter((n) => n !== 'shell' || sandboxStatus().available),
    ...(chromiumMissing(config) ? [] : WORKSPACE_BROWSER_TOOL_NAMES),
  ];
}

function settingsOf(ctx: AppContext) {
  try {
    return agentsSettings(ctx.deps.config);
  } catch (err) {
    if (err instanceof ConfigError) throw new AppError('service_unavailable', err.message);
    throw err;
  }
}

/**
 * Checks the request's tool list (unknown → 400 naming `tools[i]`, beyond the key's scopes → 403),
 * loads the agent definition (another tenant's → 404) and picks the tier.
 */
async function tierOf(ctx: AppContext, body: AgentRunBody, kind: 'agent' | 'workspace') {
  const p = principalOf(ctx);
  const extra = kind === 'workspace' ? workspaceToolNames(ctx.deps.config) : [];
  const registry = toolRegistry();
  const unknown = (body.tools ?? []).flatMap((name, i) =>
    registry.some((t) => t.name === name) || extra.includes(name)
      ? []
      : [{ path: `body.tools[${i}]`, message: `unknown tool "${name}"` }],
  );
  if (unknown.length) throw invalid(unknown);
  for (const name of body.tools ?? []) {
    const t = registry.find((x) => x.name === name);
    if (t && !mayUse(t, p.scopes))
      throw new AppError('forbidden', `The key may not use the tool "${name}": it needs ${t.scope}.`, {
        scope: String(t.scope),
      });
  }
  const agent = body.agent_id ? await getAgentDef(ctx.deps.db, p.tenantId, body.agent_id) : undefined;
  if (body.agent_id && !agent) throw notFound(`Agent ${body.agent_id}`);
  const classified = classifyQuery({ query: body.query, context: body.context, tools: body.tools });
  const tier = tierFor({
    classified,
    // A workspace run's browser tools are its own (bound to its session, in `extra`): the registry's,
    // which take any session id of the tenant, are not offered to it.
    keyTools: toolsFor(p.scopes).filter((t) => kind !== 'workspace' || t.group !== 'browser'),
    requested: body.tools,
    agent: agent
      ? { tier: agent.tier as never, lane: agent.lane as never, tools: agent.tools, guardrails: agent.guardrails }
      : undefined,
    maxSteps: body.max_steps,
    // A workspace run works in its own folder: it is never handed away.
    delegateConfigured: kind === 'agent' && settingsOf(ctx).delegate !== undefined,
    extraTools: extra,
  });
  return { tier, agent };
}

export async function runState(ctx: AppContext, id: string, kind: 'agent' | 'workspace'): Promise<AgentRunState> {
  const tenantId = principalOf(ctx).tenantId;
  const row = await getAgentRun(ctx.deps.db, tenantId, id);
  if (!row || row.kind !== kind) throw notFound(`${kind === 'agent' ? 'Agent' : 'Workspace'} run ${id}`);
  return agentRunView(row, await agentOutputs(ctx.deps.db, tenantId, id));
}

/** Creates the run row and starts `agent-<id>`; under an Idempotency-Key a retry gets the same run. */
export async function createRun(
  ctx: AppContext,
  body: AgentRunBody | WorkspaceRunBody,
  kind: 'agent' | 'workspace',
  idempotencyKey: string | undefined,
): Promise<AgentRunState> {
  const p = principalOf(ctx);
  const { db } = ctx.deps;
  const route = kind === 'agent' ? 'POST /v1/capabilities/agent' : 'POST /v1/workspaces/run';
  return withIdempotency(
    ctx,
    route,
    body,
    async () => {
      const { tier, agent } = await tierOf(ctx, body, kind);
      const ws = settingsOf(ctx).workspaces;
      const keep = 'keep_folder' in body && body.keep_folder !== undefined ? body.keep_folder : ws.keep === 'always';
      const row = await createAgentRun(db, {
        // Derived from the Idempotency-Key when there is one: a retry after a crash finds this run and its workflow.
        id: jobIdFor(ctx, 'arun'),
        kind,
        principal: p,
        query: body.query,
        context: body.context,
        agentId: agent?.id,
        instructions: agent?.instructions,
        tier,
        workspace: kind === 'workspace' ? { dir: ws.root, keep, shell: tier.tools.includes('shell') } : undefined,
      });
      await startAgentRun(ctx, {
        kind,
        title: `${kind === 'agent' ? 'Agent' : 'Workspace'}: ${body.query.slice(0, 80)}`,
        input: {
          tenantId: p.tenantId,
          runId: row.id,
          maxSteps: tier.max_steps,
          maxTokens: tier.max_tokens,
          delegate: tier.delegate,
        },
        onStartFailed: () =>
          updateAgentRun(db, p.tenantId, row.id, { status: 'failed', error: 'The run could not be started.' }),
      });
      return agentRunView(row, []);
    },
    idempotencyKey,
  );
}

/** Polls the run until it ends or `waitS` passes (the research pattern). */
export async function waitForRun(ctx: AppContext, id: string, kind: 'agent' | 'workspace', waitS: number) {
  let state = await runState(ctx, id, kind);
  const deadline = Date.now() + waitS * 1000;
  while (!FINAL.has(state.status) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    state = await runState(ctx, id, kind);
  }
  return state;
}

export async function cancelRun(ctx: AppContext, id: string, kind: 'agent' | 'workspace') {
  const state = await runState(ctx, id, kind);
  if (FINAL.has(state.status)) throw new AppError('conflict', `Run ${id} has already finished (${state.status}).`);
  await cancelAgentRun(ctx, id);
  return runState(ctx, id, kind);
}
