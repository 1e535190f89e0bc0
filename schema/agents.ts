import { z } from 'zod';
import { PUBLIC_LANES } from './model-config';
import { waitSeconds } from './common';

/** Tiers the complexity classifier picks from (activities/agents/classify.ts documents the features). */
export const AGENT_TIERS = ['quick', 'standard', 'deep', 'code'] as const;
export type AgentTierName = (typeof AGENT_TIERS)[number];

const toolName = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'a tool name (lower-case letters, digits, _)');

export const AgentRunBody = z
  .object({
    query: z.string().trim().min(1).max(20_000).describe('The task for the agent.'),
    context: z
      .union([z.string().max(50_000), z.record(z.string(), z.unknown())])
      .optional()
      .describe('Background for the task: text or a JSON object (given to the model as is).'),
    agent_id: z
      .string()
      .regex(/^agt_[A-Za-z0-9_-]{1,60}$/, 'must be an agent id')
      .optional()
      .describe('Run a stored agent definition (POST /v1/agents/vibe): its instructions, tools and lane.'),
    max_steps: z.number().int().min(1).max(32).optional().describe('Model turns at most (default by tier).'),
    tools: z
      .array(toolName)
      .max(64)
      .optional()
      .describe('Limit the agent to these tools (each must exist and be allowed for the key).'),
    wait_s: waitSeconds('Wait up to this long; 200 with the answer when the run ends in time, else 202.'),
  })
  .meta({ id: 'AgentRunRequest' });
export type AgentRunBody = z.infer<typeof AgentRunBody>;

export const WorkspaceRunBody = AgentRunBody.extend({
  keep_folder: z
    .boolean()
    .optional()
    .describe('Keep the scratch folder after the run (default: the `workspaces.keep` setting, else removed).'),
}).meta({ id: 'WorkspaceRunRequest' });
export type WorkspaceRunBody = z.infer<typeof WorkspaceRunBody>;

export const AgentTier = z.object({
  name: z.enum(AGENT_TIERS),
  lane: z.enum(PUBLIC_LANES),
  max_steps: z.number().int(),
  max_tokens: z.number().int(),
  tools: z.array(z.string()).describe('Tools this run may call: tier policy ∩ the key ∩ the request ∩ the agent.'),
  delegate: z.boolean().describe('True when the run is handed to the configured delegate.'),
  score: z.number().int().describe('Complexity score of the query (see docs/decisions.md).'),
  reasons: z.array(z.string()).describe('The features that decided the tier.'),
});
export type AgentTier = z.infer<typeof AgentTier>;

export const AgentStep = z.object({
  key: z.string().describe('Step key: `s<turn>-model` or `s<turn>-tool-<call id>`.'),
  kind: z.enum(['model', 'tool']),
  name: z.string().describe('Model lane for a model turn, tool name for a tool call.'),
  output_id: z.string().describe('Id of the stored output (job_outputs).'),
  ok: z.boolean(),
  summary: z.string().describe('The first 200 characters of the output.'),
});

export const AgentUsage = z.object({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
  model_turns: z.number().int(),
  tool_calls: z.number().int(),
});
export type AgentUsage = z.infer<typeof AgentUsage>;

export const AgentRunStatus = z.enum(['queued', 'running', 'completed', 'failed', 'cancelled']);
export const StopReason = z.enum(['answered', 'max_steps', 'max_tokens', 'delegated']);

export const AgentRunState = z
  .object({
    id: z.string(),
    kind: z.enum(['agent', 'workspace']),
    status: AgentRunStatus,
    stop_reason: StopReason.nullable(),
    query: z.string(),
    agent_id: z.string().nullable(),
    tier: AgentTier,
    answer: z.string().nullable(),
    steps: z.array(AgentStep),
    sources: z.array(z.string()).describe('URLs the tools read during the run.'),
    usage: AgentUsage,
    is_delegated: z.boolean(),
    pr_link: z.string().nullable(),
    error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'AgentRun' });
export type AgentRunState = z.infer<typeof AgentRunState>;

export const AgentRunParams = z.object({
  id: z.string().regex(/^arun_[A-Za-z0-9_-]{1,60}$/, 'must be an agent run id'),
});

// ---- vibe agents ----

export const VibeBody = z
  .object({ description: z.string().trim().min(10).max(4000).describe('What the agent should do, in prose.') })
  .meta({ id: 'VibeAgentRequest' });

export const AgentGuardrails = z.object({
  max_steps: z.number().int().min(1).max(32),
  allow_external: z.boolean().describe('May call tools that reach outside systems.'),
  allow_destructive: z.boolean().describe('May call tools that delete or overwrite data.'),
  refuse_topics: z.array(z.string().max(200)).max(20),
});

/** What the model must write (structured output); `tools` are checked against the registry afterwards. */
export const AgentDraft = z.object({
  name: z.string().trim().min(1).max(80),
  instructions: z.string().trim().min(1).max(8000),
  tools: z.array(z.string().max(64)).max(32),
  lane: z.enum(PUBLIC_LANES),
  tier: z.enum(AGENT_TIERS),
  guardrails: AgentGuardrails,
});
export type AgentDraft = z.infer<typeof AgentDraft>;

export const AgentDefinition = AgentDraft.extend({
  id: z.string(),
  description: z.string(),
  dropped_tools: z.array(z.string()).describe('Tools the model proposed that do not exist or the key may not use.'),
  created_at: z.string(),
}).meta({ id: 'AgentDefinition' });
export type AgentDefinition = z.infer<typeof AgentDefinition>;

export const AgentParams = z.object({ id: z.string().regex(/^agt_[A-Za-z0-9_-]{1,60}$/, 'must be an agent id') });
export const AgentList = z.object({ data: z.array(AgentDefinition) });

// ---- the SVC_CONFIG file's `agents` and `workspaces` sections ----

export const AgentsConfigSection = z
  .object({
    agents: z
      .object({
        delegate: z
          .object({
            url: z.url({ protocol: /^https?$/ }).describe('POST endpoint of the background code agent.'),
            token: z.string().min(1).optional().describe('Sent as a bearer token.'),
            timeout_ms: z.number().int().min(100).max(600_000).default(60_000),
          })
          .optional(),
      })
      .optional(),
    workspaces: z
      .object({
        root: z.string().min(1).optional().describe('Folder holding the per-run scratch folders.'),
        keep: z.enum(['never', 'always', 'on_failure']).default('never'),
        shell: z
          .object({
            timeout_s: z.number().int().min(1).max(600).default(20),
            memory_mb: z.number().int().min(16).max(8192).default(256),
            cpu_s: z.number().int().min(1).max(600).default(10),
          })
          .default({ timeout_s: 20, memory_mb: 256, cpu_s: 10 }),
      })
      .optional(),
  })
  .loose();
export type AgentsConfigSection = z.infer<typeof AgentsConfigSection>;
