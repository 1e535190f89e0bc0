-- Stored chat completions (OpenAI's `store: true` on POST /v1/chat/completions and the utility lanes): the completion
-- as it was answered, the request's messages, and the client's metadata (jsonb: GET /v1/chat/completions filters by
-- `metadata[key]=value`; the rest json, kept as answered, key order too). Kept 30 days, as stored responses; the
-- retention sweep removes expired ones of every tenant.
CREATE TABLE chat_completions (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  model       text NOT NULL,
  metadata    jsonb NOT NULL,
  messages    json NOT NULL,
  completion  json NOT NULL,
  size_bytes  integer NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL
);
CREATE INDEX chat_completions_tenant_created_idx ON chat_completions (tenant_id, created_at, id);
CREATE INDEX chat_completions_expires_idx ON chat_completions (expires_at);
