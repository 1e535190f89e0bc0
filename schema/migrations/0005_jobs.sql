-- Durable agent jobs: goals and sovereign goals, parallel agent dispatch, swarm runs, and the
-- model outputs they produce (stored here, passed between workflow steps by id).

CREATE TABLE goals (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  kind         text NOT NULL CHECK (kind IN ('goal', 'sovereign')),
  title        text NOT NULL,
  description  text,
  lane         text NOT NULL DEFAULT 'svc-oracle',
  status       text NOT NULL,
  plan         jsonb NOT NULL DEFAULT '[]'::jsonb,
  step_index   integer NOT NULL DEFAULT 0,
  last_step    jsonb,
  result       text,
  error        text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX goals_tenant_kind_idx ON goals (tenant_id, kind, created_at DESC, id DESC);

-- One row per (job, step key): a retried or replayed step finds its output here and does not
-- call the model again.
CREATE TABLE job_outputs (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  job_id       text NOT NULL,
  step_key     text NOT NULL,
  lane         text NOT NULL,
  provider     text,
  content      text NOT NULL,
  usage        jsonb,
  duration_ms  integer,
  created_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (job_id, step_key)
);
CREATE INDEX job_outputs_tenant_job_idx ON job_outputs (tenant_id, job_id);

CREATE TABLE pad_sessions (
  id               text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  status           text NOT NULL CHECK (status IN ('running', 'completed', 'cancelled')),
  max_concurrency  integer NOT NULL,
  agent_count      integer NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  finished_at      timestamptz
);
CREATE INDEX pad_sessions_tenant_idx ON pad_sessions (tenant_id, created_at DESC, id DESC);

CREATE TABLE pad_agents (
  session_id   text NOT NULL REFERENCES pad_sessions(id) ON DELETE CASCADE,
  idx          integer NOT NULL,
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  name         text NOT NULL,
  prompt       text NOT NULL,
  lane         text NOT NULL,
  surface      text,
  status       text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
  output_id    text,
  error        text,
  attempts     integer NOT NULL DEFAULT 0,
  started_at   timestamptz,
  finished_at  timestamptz,
  duration_ms  integer,
  PRIMARY KEY (session_id, idx)
);

CREATE TABLE swarm_runs (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  operation   text NOT NULL,
  params      jsonb NOT NULL,
  status      text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
  progress    jsonb NOT NULL DEFAULT '{"done":0,"total":0}'::jsonb,
  result      jsonb,
  error       text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX swarm_runs_tenant_idx ON swarm_runs (tenant_id, created_at DESC, id DESC);
