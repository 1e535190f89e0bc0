-- Browser automation: one row per session (workflow browser-<id>) with its last checkpoint
-- (storageState + URL, encrypted when SVC_STATE_KEY is set), and named saved states per tenant.

CREATE TABLE browser_sessions (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  status          text NOT NULL CHECK (status IN ('opening', 'open', 'recovering', 'closed', 'expired', 'failed')),
  url             text,
  title           text,
  worker_id       text,
  options         jsonb NOT NULL DEFAULT '{}'::jsonb,
  idle_timeout_s  integer NOT NULL,
  expires_at      timestamptz,
  checkpoint      text,
  checkpoint_at   timestamptz,
  error           text,
  recoveries      integer NOT NULL DEFAULT 0,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  closed_at       timestamptz
);
CREATE INDEX browser_sessions_tenant_idx ON browser_sessions (tenant_id, created_at DESC, id DESC);
CREATE INDEX browser_sessions_live_idx ON browser_sessions (tenant_id) WHERE status IN ('opening', 'open', 'recovering');

CREATE TABLE browser_states (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  name        text NOT NULL,
  state       text NOT NULL,
  encrypted   boolean NOT NULL,
  origins     integer NOT NULL DEFAULT 0,
  cookies     integer NOT NULL DEFAULT 0,
  source_session_id text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, name)
);
