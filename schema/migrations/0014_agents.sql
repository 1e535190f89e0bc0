-- Agents (issue 13 part B): stored agent definitions (POST /v1/agents/vibe) and agent runs
-- (POST /v1/capabilities/agent, POST /v1/workspaces/run). Model turns and tool outputs live in
-- job_outputs keyed by (run id, step key); a run row holds only what the poll answer needs.

CREATE TABLE agent_defs (
  id            text PRIMARY KEY,
  tenant_id     text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  name          text NOT NULL,
  description   text NOT NULL,
  instructions  text NOT NULL,
  tools         jsonb NOT NULL,
  dropped_tools jsonb NOT NULL DEFAULT '[]'::jsonb,
  lane          text NOT NULL,
  tier          text NOT NULL,
  guardrails    jsonb NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_defs_tenant_idx ON agent_defs (tenant_id, created_at DESC, id DESC);

CREATE TABLE agent_runs (
  id            text PRIMARY KEY,
  tenant_id     text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  kind          text NOT NULL CHECK (kind IN ('agent', 'workspace')),
  status        text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
  stop_reason   text CHECK (stop_reason IN ('answered', 'max_steps', 'max_tokens', 'delegated')),
  query         text NOT NULL,
  context       jsonb,
  agent_id      text,
  instructions  text,
  tier          jsonb NOT NULL,
  -- The starting key's scopes: tool calls run with them (a run never gains tools later).
  principal     jsonb NOT NULL,
  answer        text,
  usage         jsonb NOT NULL DEFAULT '{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0,"model_turns":0,"tool_calls":0}'::jsonb,
  is_delegated  boolean NOT NULL DEFAULT false,
  pr_link       text,
  workspace     jsonb,
  error         text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_runs_tenant_idx ON agent_runs (tenant_id, created_at DESC, id DESC);
