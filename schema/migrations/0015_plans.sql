-- Tool plans (POST /v1/tools/plan), their runs (POST /v1/tools/execute-plan, workflow plan-<run id>)
-- and one stored result per run and step: the row that makes a step run exactly once.

CREATE TABLE tool_plans (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  key_id      text,
  goal        text NOT NULL,
  source      text NOT NULL CHECK (source IN ('given', 'model')),
  plan        jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tool_plans_tenant_idx ON tool_plans (tenant_id, created_at DESC);

CREATE TABLE tool_plan_runs (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  plan_id      text NOT NULL REFERENCES tool_plans(id) ON DELETE CASCADE,
  key_id       text NOT NULL,
  scopes       text[] NOT NULL,
  surface      text,
  status       text NOT NULL CHECK (status IN ('running', 'awaiting_approval', 'completed', 'failed', 'cancelled', 'dry_run')),
  approved     text[] NOT NULL DEFAULT '{}',
  awaiting     text[] NOT NULL DEFAULT '{}',
  created_at   timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz
);
CREATE INDEX tool_plan_runs_tenant_idx ON tool_plan_runs (tenant_id, plan_id);

CREATE TABLE tool_plan_results (
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  run_id      text NOT NULL REFERENCES tool_plan_runs(id) ON DELETE CASCADE,
  step_id     text NOT NULL,
  status      text NOT NULL CHECK (status IN ('completed', 'failed', 'skipped', 'cancelled')),
  result      jsonb,
  error       text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, step_id)
);
