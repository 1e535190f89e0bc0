-- OpenAI's Uploads API (/v1/uploads): a file sent in parts. An upload (`upload_...`) is pending for an hour; its parts
-- (`part_...`) are kept here until it completes (they are joined, in the order the client lists them, into a row of
-- `files` in the same transaction and deleted), is cancelled (deleted) or expires (deleted by the tenant's next files
-- write or the hourly retention sweep). 'expired' is not stored: a pending upload past expires_at is expired. An
-- upload row is removed a day after it expired, whatever its state.
CREATE TABLE uploads (
  id                    text PRIMARY KEY,
  tenant_id             text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  filename              text NOT NULL,
  purpose               text NOT NULL,
  mime_type             text NOT NULL,
  bytes                 bigint NOT NULL,
  -- expires_after.seconds of the file it makes (null: the file does not expire).
  file_expires_seconds  integer,
  status                text NOT NULL CHECK (status IN ('pending', 'completed', 'cancelled')),
  -- The file it made (no reference: the file may be deleted, the upload still says what it made).
  file_id               text,
  created_at            timestamptz NOT NULL DEFAULT now(),
  expires_at            timestamptz NOT NULL
);
CREATE INDEX uploads_expires_idx ON uploads (expires_at);

CREATE TABLE upload_parts (
  id          text PRIMARY KEY,
  upload_id   text NOT NULL REFERENCES uploads(id) ON DELETE CASCADE,
  tenant_id   text NOT NULL,
  size_bytes  bigint NOT NULL,
  bytes       bytea NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX upload_parts_upload_idx ON upload_parts (upload_id);
CREATE INDEX upload_parts_tenant_idx ON upload_parts (tenant_id, upload_id);
