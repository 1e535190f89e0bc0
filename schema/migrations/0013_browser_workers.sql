-- Browser workers report themselves here (issue 14, GET /v1/daemons): one row per live worker process,
-- refreshed every few seconds and deleted on a clean stop. Operational data only: no tenant rows or
-- ids, only counts, so it has no tenant column.
CREATE TABLE IF NOT EXISTS browser_workers (
  worker_id text PRIMARY KEY,
  chromium_version text,
  capacity int NOT NULL,
  sessions_open int NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  seen_at timestamptz NOT NULL DEFAULT now()
);
