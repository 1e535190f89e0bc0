-- Knowledge: one store for documents, uploads, memory, spaces, learning jobs and share links.

-- Spaces are document collections. tenant_id NULL marks a legacy row imported without an owner:
-- such rows are never listed or usable until `npm run -s spaces -- migrate-legacy --tenant <id>`
-- assigns them (the one place where a tenant-scoped table allows a NULL owner).
CREATE TABLE spaces (
  id           text PRIMARY KEY,
  tenant_id    text REFERENCES tenants(id) ON DELETE CASCADE,
  name         text NOT NULL,
  description  text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX spaces_tenant_idx ON spaces (tenant_id, created_at DESC, id DESC);
CREATE INDEX spaces_legacy_idx ON spaces (created_at) WHERE tenant_id IS NULL;

-- A document is the unit every feature writes: an upload, an ingested text or web page, a learned source.
CREATE TABLE documents (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  space_id     text REFERENCES spaces(id) ON DELETE CASCADE,
  source_kind  text NOT NULL CHECK (source_kind IN ('upload', 'ingest', 'web', 'learn')),
  title        text NOT NULL,
  media_type   text NOT NULL,
  size_bytes   integer NOT NULL CHECK (size_bytes >= 0),
  text         text NOT NULL,
  content_hash text NOT NULL,
  -- Where it came from: { filename?, url?, final_url?, job_id?, source_index?, from_document_id? }.
  provenance   jsonb NOT NULL DEFAULT '{}'::jsonb,
  chunk_count  integer NOT NULL DEFAULT 0,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX documents_tenant_idx ON documents (tenant_id, created_at DESC, id DESC);
CREATE INDEX documents_space_idx ON documents (space_id, created_at DESC, id DESC) WHERE space_id IS NOT NULL;
CREATE INDEX documents_learned_idx ON documents (tenant_id) WHERE source_kind = 'learn';
-- A learning activity retried by Temporal finds the document it already wrote for its source.
CREATE UNIQUE INDEX documents_learn_source_idx ON documents (tenant_id, (provenance->>'job_id'), (provenance->>'source_index'))
  WHERE source_kind = 'learn';

-- Chunks carry the full-text index: the title weighs more (A) than the body (B).
CREATE TABLE chunks (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  document_id  text NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  ord          integer NOT NULL,
  title        text NOT NULL DEFAULT '',
  text         text NOT NULL,
  tsv          tsvector GENERATED ALWAYS AS (
                 setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', text), 'B')
               ) STORED,
  created_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (document_id, ord)
);
CREATE INDEX chunks_tsv_idx ON chunks USING gin (tsv);
CREATE INDEX chunks_tenant_idx ON chunks (tenant_id);

-- Memory fragments: what the service remembers, each tied to the chunk it came from.
CREATE TABLE memories (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  document_id  text REFERENCES documents(id) ON DELETE CASCADE,
  chunk_id     text REFERENCES chunks(id) ON DELETE CASCADE,
  kind         text NOT NULL,
  provenance   text NOT NULL CHECK (provenance IN ('told', 'read', 'seen', 'learned')),
  content      text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX memories_tenant_idx ON memories (tenant_id, created_at DESC, id DESC);
CREATE INDEX memories_kind_idx ON memories (tenant_id, kind, created_at DESC, id DESC);

-- Enterprise learning jobs (workflow learn-<id>) and their sources with per-source progress.
CREATE TABLE learn_jobs (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  space_id     text REFERENCES spaces(id) ON DELETE SET NULL,
  status       text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
  total        integer NOT NULL,
  error        text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  started_at   timestamptz,
  finished_at  timestamptz
);
CREATE INDEX learn_jobs_tenant_idx ON learn_jobs (tenant_id, created_at DESC);

CREATE TABLE learn_sources (
  job_id       text NOT NULL REFERENCES learn_jobs(id) ON DELETE CASCADE,
  idx          integer NOT NULL,
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  kind         text NOT NULL CHECK (kind IN ('url', 'text', 'document')),
  url          text,
  title        text,
  -- Inline text sources live here, not in workflow history.
  text         text,
  source_document_id text,
  status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'completed', 'failed', 'cancelled')),
  error        text,
  document_id  text REFERENCES documents(id) ON DELETE SET NULL,
  chunks       integer,
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (job_id, idx)
);

-- Share links: the id is the unguessable capability behind the public page /share/<id>.
CREATE TABLE shares (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  title        text NOT NULL,
  format       text NOT NULL CHECK (format IN ('markdown', 'html')),
  content      text NOT NULL,
  html         text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX shares_tenant_idx ON shares (tenant_id, created_at DESC, id DESC);
