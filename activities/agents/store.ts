import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import {
  AgentGuardrails,
  AgentRunStatus,
  AgentTier,
  StopReason,
  type AgentDefinition,
  type AgentDraft,
  type AgentRunState,
} from '../../schema/agents';
import { newId } from '../store/ids';
import type { KeyPrincipal } from '../store/keys';

// Agent definitions and agent runs. Every query filters by tenant; another tenant's id reads as absent.

const DefRow = z.object({
  id: z.string(),
  tenant_id: z.string(),
  name: z.string(),
  description: z.string(),
  instructions: z.string(),
  tools: z.array(z.string()),
  dropped_tools: z.array(z.string()),
  lane: z.string(),
  tier: z.string(),
  guardrails: AgentGuardrails,
  created_at: z.string(),
});
type DefRow = z.infer<typeof DefRow>;

export function agentDefView(r: DefRow): AgentDefinition {
  const { tenant_id: _t, ...rest } = r;
  void _t;
  return rest as AgentDefinition;
}

export async function createAgentDef(
  db: CommonQueryMethods,
  o: { tenantId: string; description: string; draft: AgentDraft; dropped: string[] },
): Promise<DefRow> {
  const d = o.draft;
  return db.one(sql.type(DefRow)`
    INSERT INTO agent_defs (id, tenant_id, name, description, instructions, tools, dropped_tools, lane, tier, guardrails)
    VALUES (${newId('agt')}, ${o.tenantId}, ${d.name}, ${o.description}, ${d.instructions}, ${sql.jsonb(d.tools)},
            ${sql.jsonb(o.dropped)}, ${d.lane}, ${d.tier}, ${sql.jsonb(d.guardrails as never)})
    RETURNING *`);
}

export async function getAgentDef(db: CommonQueryMethods, tenantId: string, id: string): Promise<DefRow | null> {
  return db.maybeOne(sql.type(DefRow)`SELECT * FROM agent_defs WHERE tenant_id = ${tenantId} AND id = ${id}`);
}

export async function listAgentDefs(db: CommonQueryMethods, tenantId: string): Promise<readonly DefRow[]> {
  return db.any(sql.type(DefRow)`
    SELECT * FROM agent_defs WHERE tenant_id = ${tenantId} ORDER BY created_at DESC, id DESC LIMIT 200`);
}

/** @returns whether a definition was deleted */
export async function deleteAgentDef(db: CommonQueryMethods, tenantId: string, id: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`DELETE FROM agent_defs WHERE tenant_id = ${tenantId} AND id = ${id}`);
  return r.rowCount > 0;
}

const Usage = z.object({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
  model_turns: z.number().int(),
  tool_calls: z.number().int(),
});

const RunRow = z.object({
  id: z.string(),
  tenant_id: z.string(),
  kind: z.enum(['agent', 'workspace']),
  status: AgentRunStatus,
  stop_reason: StopReason.nullable(),
  query: z.string(),
  context: z.unknown().nullable(),
  agent_id: z.string().nullable(),
  instructions: z.string().nullable(),
  tier: AgentTier,
  principal: z.object({
    keyId: z.string(),
    tenantId: z.string(),
    kind: z.enum(['runtime', 'legacy', 'bootstrap']),
    scopes: z.array(z.string()),
    app: z.string().nullable(),
  }),
  answer: z.string().nullable(),
  usage: Usage,
  is_delegated: z.boolean(),
  pr_link: z.string().nullable(),
  workspace: z.object({ dir: z.string(), keep: z.boolean(), shell: z.boolean() }).nullable(),
  error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type AgentRunRow = z.infer<typeof RunRow>;

/** Inserts a run; an id derived from an Idempotency-Key may already exist (a retry after a crash): that row is kept and returned. */
export async function createAgentRun(
  db: CommonQueryMethods,
  o: {
    id?: string;
    kind: 'agent' | 'workspace';
    principal: KeyPrincipal;
    query: string;
    context?: unknown;
    agentId?: string;
    instructions?: string;
    tier: AgentTier;
    workspace?: { dir: string; keep: boolean; shell: boolean };
  },
): Promise<AgentRunRow> {
  const id = o.id ?? newId('arun');
  const row = await db.maybeOne(sql.type(RunRow)`
    INSERT INTO agent_runs (id, tenant_id, kind, status, query, context, agent_id, instructions, tier, principal, workspace)
    VALUES (${id}, ${o.principal.tenantId}, ${o.kind}, 'queued', ${o.query}, ${sql.jsonb((o.context ?? null) as never)},
            ${o.agentId ?? null}, ${o.instructions ?? null}, ${sql.jsonb(o.tier as never)},
            ${sql.jsonb(o.principal as never)},
            ${o.workspace ? sql.jsonb({ ...o.workspace, dir: `${o.workspace.dir}/${id}` }) : null})
    ON CONFLICT (id) DO NOTHING
    RETURNING *`);
  return (
    row ?? db.one(sql.type(RunRow)`SELECT * FROM agent_runs WHERE id = ${id} AND tenant_id = ${o.principal.tenantId}`)
  );
}

/**
 * Locks a run that has not ended against ending (FOR SHARE: its finish waits for the caller's transaction); false when
 * it has ended. A step stored under it lands before the run reads ended, or not at all.
 */
export async function holdOpenRun(tx: CommonQueryMethods, tenantId: string, id: string): Promise<boolean> {
  return tx.exists(sql.unsafe`
    SELECT 1 FROM agent_runs WHERE tenant_id = ${tenantId} AND id = ${id}
      AND status NOT IN ('completed', 'failed', 'cancelled') FOR SHARE`);
}

export async function getAgentRun(db: CommonQueryMethods, tenantId: string, id: string): Promise<AgentRunRow | null> {
  return db.maybeOne(sql.type(RunRow)`SELECT * FROM agent_runs WHERE tenant_id = ${tenantId} AND id = ${id}`);
}

/**
 * Sets the given fields; a finished run (completed, failed, cancelled) is never changed again.
 * @returns false when the run had ended (nothing written)
 */
export async function updateAgentRun(
  db: CommonQueryMethods,
  tenantId: string,
  id: string,
  f: {
    status?: z.infer<typeof AgentRunStatus>;
    stopReason?: z.infer<typeof StopReason>;
    answer?: string | null;
    usage?: z.infer<typeof Usage>;
    delegated?: { prLink: string | null };
    error?: string;
  },
): Promise<boolean> {
  const sets = [sql.fragment`updated_at = now()`];
  if (f.status) sets.push(sql.fragment`status = ${f.status}`);
  if (f.stopReason) sets.push(sql.fragment`stop_reason = ${f.stopReason}`);
  if (f.answer !== undefined) sets.push(sql.fragment`answer = ${f.answer}`);
  if (f.usage) sets.push(sql.fragment`usage = ${sql.jsonb(f.usage)}`);
  if (f.delegated) sets.push(sql.fragment`is_delegated = true, pr_link = ${f.delegated.prLink}`);
  if (f.error) sets.push(sql.fragment`error = ${f.error}`);
  const r = await db.query(sql.unsafe`
    UPDATE agent_runs SET ${sql.join(sets, sql.fragment`, `)}
    WHERE tenant_id = ${tenantId} AND id = ${id} AND status NOT IN ('completed', 'failed', 'cancelled')`);
  return r.rowCount > 0;
}

const OutRow = z.object({
  id: z.string(),
  step_key: z.string(),
  lane: z.string(),
  content: z.string(),
  usage: z.unknown().nullable(),
});
export type AgentOutputRow = z.infer<typeof OutRow>;

/** Every stored step output of a run (model turns and tool calls), in step order. */
export async function agentOutputs(
  db: CommonQueryMethods,
  tenantId: string,
  runId: string,
): Promise<readonly AgentOutputRow[]> {
  return db.any(sql.type(OutRow)`
    SELECT id, step_key, lane, content, usage FROM job_outputs
    WHERE tenant_id = ${tenantId} AND job_id = ${runId} ORDER BY step_key, created_at`);
}

export type { AgentRunState };
