-- Keys the service makes for itself, one per purpose (e.g. `compaction`: sealing the summaries of
-- POST /v1/responses/compact), created on first use and shared by every replica through this table.
CREATE TABLE service_keys (
  name        text PRIMARY KEY,
  key         bytea NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
