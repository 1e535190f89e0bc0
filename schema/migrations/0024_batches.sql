-- OpenAI's Batch API (/v1/batches): a JSONL file of requests answered by a durable workflow (`batch_...`). Each request
-- is planned when the batch is created (`job`: the lane request the worker runs) and keeps its outcome (`result`: its
-- output line), so a worker that stops resumes with the requests still pending and no request is answered twice.
CREATE TABLE batches (
  id                text PRIMARY KEY,
  tenant_id         text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  key_id            text NOT NULL,
  endpoint          text NOT NULL,
  input_file_id     text NOT NULL,
  completion_window text NOT NULL,
  status            text NOT NULL,
  metadata          json,
  errors            json,
  output_expires_seconds integer,
  -- The rate-limit windows the batch was admitted in: its requests' tokens are charged to them.
  windows           json,
  request_total     integer NOT NULL DEFAULT 0,
  request_completed integer NOT NULL DEFAULT 0,
  request_failed    integer NOT NULL DEFAULT 0,
  tokens_in         bigint NOT NULL DEFAULT 0,
  tokens_out        bigint NOT NULL DEFAULT 0,
  output_file_id    text,
  error_file_id     text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  in_progress_at    timestamptz,
  finalizing_at     timestamptz,
  completed_at      timestamptz,
  failed_at         timestamptz,
  cancelling_at     timestamptz,
  cancelled_at      timestamptz,
  expired_at        timestamptz,
  expires_at        timestamptz NOT NULL
);
CREATE INDEX batches_tenant_created_idx ON batches (tenant_id, created_at, id);

CREATE TABLE batch_requests (
  batch_id   text NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  line       integer NOT NULL,
  custom_id  text NOT NULL,
  job        json NOT NULL,
  -- pending, completed or failed; `result` is the output line once it is not pending.
  status     text NOT NULL DEFAULT 'pending',
  result     json,
  PRIMARY KEY (batch_id, line)
);
CREATE INDEX batch_requests_pending_idx ON batch_requests (batch_id, line) WHERE status = 'pending';
