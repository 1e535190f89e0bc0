-- Live plane: resonance samples (written by the Temporal schedule), daily aggregates (for the
-- weekly climate index), reflection prompts, per-address rate-limit windows, tenant identity profiles.

CREATE TABLE live_samples (
  id          bigserial PRIMARY KEY,
  sampled_at  timestamptz NOT NULL UNIQUE, -- one per minute: a retried sample overwrites its own row
  eri         double precision NOT NULL,
  state       jsonb NOT NULL
);

-- Recomputed from the source tables for the whole day at each sample (idempotent upsert).
CREATE TABLE live_daily (
  day             date PRIMARY KEY,
  sentiment_sum   double precision NOT NULL DEFAULT 0,
  sentiment_n     integer NOT NULL DEFAULT 0,
  requests        integer NOT NULL DEFAULT 0,
  jobs_done       integer NOT NULL DEFAULT 0,
  errors          integer NOT NULL DEFAULT 0,
  eri_sum         double precision NOT NULL DEFAULT 0,
  eri_n           integer NOT NULL DEFAULT 0,
  updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE flow_prompts (
  id            text PRIMARY KEY,
  trigger       text NOT NULL CHECK (trigger IN ('manual', 'eri_drift')),
  prompt        text NOT NULL,
  context       jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at    timestamptz NOT NULL DEFAULT now(),
  dismissed_at  timestamptz
);
CREATE INDEX flow_prompts_pending_idx ON flow_prompts (created_at, id) WHERE dismissed_at IS NULL;

-- Fixed one-minute windows per (bucket, address); every replica counts in the same row.
CREATE TABLE public_rate_limits (
  bucket        text NOT NULL,
  window_start  timestamptz NOT NULL,
  hits          integer NOT NULL DEFAULT 0,
  PRIMARY KEY (bucket, window_start)
);

CREATE TABLE tenant_identity (
  tenant_id   text PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  profile     jsonb NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
