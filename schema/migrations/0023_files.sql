-- OpenAI's Files API (/v1/files): a tenant's uploaded files, by id (`file-...`), for file parts and input files and
-- images of chat and responses (file_id). The bytes are kept here, as generated images are; a file may expire
-- (expires_after), and its tenant's expired files are removed on its next upload.
CREATE TABLE files (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  filename     text NOT NULL,
  purpose      text NOT NULL,
  content_type text NOT NULL,
  size_bytes   bigint NOT NULL,
  bytes        bytea NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz
);
CREATE INDEX files_tenant_created_idx ON files (tenant_id, created_at, id);
CREATE INDEX files_expires_idx ON files (expires_at) WHERE expires_at IS NOT NULL;
