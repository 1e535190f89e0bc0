-- Gateway: cache invalidation notices, rate limits and budgets, usage counters, and which key
-- started which job (so a revoked key's running work can be cancelled).

-- Every change that must reach the in-process caches of every API replica is announced on one
-- channel by trigger, whatever path made it (API, operator CLI, plain SQL). Payload: "<kind>:<id>".
CREATE FUNCTION svc_gateway_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'api_keys' THEN
    PERFORM pg_notify('svc_gateway', 'key:' || NEW.id);
  ELSIF TG_TABLE_NAME = 'chat_feedback' THEN
    PERFORM pg_notify('svc_gateway', 'feedback:' || NEW.tenant_id);
  ELSIF TG_TABLE_NAME = 'rate_limits' THEN
    PERFORM pg_notify('svc_gateway', 'limits:' || coalesce(NEW.tenant_id, OLD.tenant_id));
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER api_keys_gateway_notify AFTER UPDATE OF revoked_at, scopes ON api_keys
  FOR EACH ROW EXECUTE FUNCTION svc_gateway_notify();
CREATE TRIGGER chat_feedback_gateway_notify AFTER INSERT ON chat_feedback
  FOR EACH ROW EXECUTE FUNCTION svc_gateway_notify();

-- Limits of one key (key_id = the key) or of the whole tenant (key_id = ''); NULL = no limit.
CREATE TABLE rate_limits (
  tenant_id           text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  key_id              text NOT NULL DEFAULT '',
  requests_per_minute integer CHECK (requests_per_minute > 0),
  tokens_per_minute   bigint CHECK (tokens_per_minute > 0),
  tokens_per_day      bigint CHECK (tokens_per_day > 0),
  tokens_per_month    bigint CHECK (tokens_per_month > 0),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, key_id)
);
CREATE TRIGGER rate_limits_gateway_notify AFTER INSERT OR UPDATE OR DELETE ON rate_limits
  FOR EACH ROW EXECUTE FUNCTION svc_gateway_notify();

-- Shared window counters (scope = key id, or '' for the tenant); replicas add batched deltas.
CREATE TABLE rate_counters (
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  scope        text NOT NULL,
  win          text NOT NULL CHECK (win IN ('minute', 'day', 'month')),
  window_start bigint NOT NULL,
  requests     bigint NOT NULL DEFAULT 0,
  tokens       bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, scope, win, window_start)
);

-- Usage per tenant, key, lane and UTC day (GET /v1/usage), written in batches.
CREATE TABLE usage_daily (
  tenant_id  text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  key_id     text NOT NULL,
  lane       text NOT NULL,
  day        date NOT NULL,
  requests   bigint NOT NULL DEFAULT 0,
  errors     bigint NOT NULL DEFAULT 0,
  tokens_in  bigint NOT NULL DEFAULT 0,
  tokens_out bigint NOT NULL DEFAULT 0,
  estimated  bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, day, key_id, lane)
);

-- The key that started each durable job; cancelled_reason is set when the gateway cancels it.
CREATE TABLE job_keys (
  workflow_id      text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  key_id           text NOT NULL,
  kind             text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  cancelled_reason text
);
CREATE INDEX job_keys_key_idx ON job_keys (key_id) WHERE cancelled_reason IS NULL;
