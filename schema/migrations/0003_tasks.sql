-- Task platform (tasks, step DAGs, run outputs), the generic event stream, and the entity history store.

CREATE TABLE tasks (
  id               text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  title            text NOT NULL,
  description      text,
  surface          text,
  session_id       text,
  priority         integer NOT NULL DEFAULT 0,
  metadata         jsonb NOT NULL DEFAULT '{}'::jsonb,
  status           text NOT NULL DEFAULT 'pending'
                   CHECK (status IN ('pending', 'running', 'completed', 'failed', 'cancelled')),
  -- The Temporal run that owns the task while it runs; activities of any other run write nothing.
  run_id           text,
  -- Newest event id of the task's stream when the current run was started: SSE of a run starts after it.
  run_event_floor  bigint NOT NULL DEFAULT 0,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tasks_tenant_created_idx ON tasks (tenant_id, created_at DESC, id DESC);
CREATE INDEX tasks_tenant_status_idx ON tasks (tenant_id, status);
CREATE INDEX tasks_tenant_session_idx ON tasks (tenant_id, session_id) WHERE session_id IS NOT NULL;

CREATE TABLE task_steps (
  task_id      text NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  id           text NOT NULL,
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  title        text NOT NULL,
  action       text NOT NULL
               CHECK (action IN ('research', 'fetch', 'summarize', 'compare', 'draft', 'generate', 'save', 'webhook')),
  args         jsonb NOT NULL DEFAULT '{}'::jsonb,
  depends_on   text[] NOT NULL DEFAULT '{}',
  order_num    integer NOT NULL DEFAULT 0,
  status       text NOT NULL DEFAULT 'pending'
               CHECK (status IN ('pending', 'running', 'completed', 'failed', 'skipped', 'cancelled')),
  result       text,
  error        text,
  attempts     integer NOT NULL DEFAULT 0,
  -- Run that last changed the step (idempotency key of its activities: run + step).
  run_id       text,
  started_at   timestamptz,
  finished_at  timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (task_id, id)
);
CREATE INDEX task_steps_tenant_idx ON task_steps (tenant_id);

-- Content stored by `save` steps: one row per (run, step), so a retried activity writes once.
CREATE TABLE task_outputs (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  task_id     text REFERENCES tasks(id) ON DELETE SET NULL,
  step_id     text NOT NULL,
  run_id      text NOT NULL,
  title       text,
  content     text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, run_id, step_id)
);
CREATE INDEX task_outputs_task_idx ON task_outputs (tenant_id, task_id);

-- Generic persisted event stream (task step updates, job progress): monotonic ids per stream,
-- fanned out with NOTIFY (ids only), resumed by id (SSE Last-Event-ID).
CREATE TABLE events (
  id          bigserial PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  stream      text NOT NULL,
  type        text NOT NULL,
  data        jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_stream_id_idx ON events (stream, id);

CREATE TABLE entities (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  name        text NOT NULL,
  name_norm   text NOT NULL,
  kind        text NOT NULL DEFAULT 'unknown'
              CHECK (kind IN ('person', 'business', 'vendor', 'account', 'unknown')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX entities_tenant_name_idx ON entities (tenant_id, name_norm);

-- An alias (normalized) belongs to at most one entity per tenant: the first to claim it.
CREATE TABLE entity_aliases (
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  alias_norm  text NOT NULL,
  alias       text NOT NULL,
  entity_id   text NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  position    integer NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, alias_norm)
);
CREATE INDEX entity_aliases_entity_idx ON entity_aliases (entity_id);

CREATE TABLE entity_events (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  entity_id    text NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  kind         text NOT NULL CHECK (kind IN ('message', 'invoice', 'booking', 'call', 'note', 'event')),
  content      text,
  task_id      text REFERENCES tasks(id) ON DELETE SET NULL,
  metadata     jsonb NOT NULL DEFAULT '{}'::jsonb,
  occurred_at  timestamptz NOT NULL DEFAULT now(),
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX entity_events_entity_idx ON entity_events (entity_id, occurred_at DESC, id DESC);
