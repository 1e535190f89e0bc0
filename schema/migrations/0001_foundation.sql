-- Tenants, keys and the waitlist: everything the runtime foundation stores.
CREATE TABLE tenants (
  id          text PRIMARY KEY,
  name        text,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id            text PRIMARY KEY,
  tenant_id     text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  kind          text NOT NULL CHECK (kind IN ('runtime', 'legacy', 'bootstrap')),
  -- svc.<prefix>.<secret> and agb.<prefix>.<secret>: the prefix finds the row.
  -- legacy.* keys have no prefix: the hash of the whole key finds the row.
  prefix        text UNIQUE,
  secret_hash   text NOT NULL,
  scopes        text[] NOT NULL DEFAULT '{}',
  name          text,
  app           text,
  device_id     text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  revoked_at    timestamptz,
  last_used_at  timestamptz
);
CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id);
CREATE UNIQUE INDEX api_keys_legacy_hash_idx ON api_keys (secret_hash) WHERE kind = 'legacy';

CREATE TABLE waitlist (
  id          bigserial PRIMARY KEY,
  email       text,
  name        text,
  created_at  timestamptz NOT NULL DEFAULT now()
);
-- Duplicate emails are stored once (case-insensitive); entries without email always insert.
CREATE UNIQUE INDEX waitlist_email_idx ON waitlist (lower(email)) WHERE email IS NOT NULL;

-- Idempotency records for create endpoints: same key + same body = same answer.
CREATE TABLE idempotency_keys (
  tenant_id     text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  route         text NOT NULL,
  key           text NOT NULL,
  request_hash  text NOT NULL,
  status        integer,
  response      jsonb,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, route, key)
);
