-- Chat gateway: sessions (X-Session-ID, per tenant and surface), their messages, and feedback.
CREATE TABLE chat_sessions (
  id             text PRIMARY KEY,
  tenant_id      text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  -- The client's X-Session-ID; unique per tenant and surface ('' = no surface).
  session_key    text NOT NULL,
  surface        text NOT NULL DEFAULT '',
  title          text,
  message_count  integer NOT NULL DEFAULT 0,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, surface, session_key)
);
CREATE INDEX chat_sessions_tenant_updated_idx ON chat_sessions (tenant_id, updated_at DESC, id);
CREATE INDEX chat_sessions_tenant_key_idx ON chat_sessions (tenant_id, session_key);

CREATE TABLE chat_messages (
  id          bigserial PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  session_id  text NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
  role        text NOT NULL CHECK (role IN ('user', 'assistant')),
  content     text NOT NULL,
  lane        text,
  provider    text,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chat_messages_session_idx ON chat_messages (session_id, id);

CREATE TABLE chat_feedback (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  surface      text NOT NULL DEFAULT '',
  profile      text,
  session_key  text,
  prompt       text NOT NULL,
  response     text NOT NULL,
  sass         double precision CHECK (sass >= 0 AND sass <= 1),
  roast        text,
  lesson       text,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chat_feedback_tenant_surface_idx ON chat_feedback (tenant_id, surface, created_at DESC);
