-- OpenAI's Vector Stores API (/v1/vector_stores) and the Responses API's `file_search` tool: a tenant's collections of
-- its files (/v1/files), each file read, split into token windows and (when the provider embeds) embedded by a
-- workflow; searched by full text and, where vectors exist, by cosine similarity. A vector store file keeps its own
-- text and name, so deleting the file from /v1/files leaves what the store has learnt (OpenAI's behaviour).
CREATE TABLE vector_stores (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  name            text NOT NULL,
  description     text,
  metadata        jsonb NOT NULL DEFAULT '{}',
  expires_days    integer,
  created_at      timestamptz NOT NULL DEFAULT now(),
  last_active_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX vector_stores_tenant_created_idx ON vector_stores (tenant_id, created_at, id);

-- A batch of files added together (`vsfb_...`); its status is read from its files.
CREATE TABLE vector_store_file_batches (
  id               text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  vector_store_id  text NOT NULL REFERENCES vector_stores(id) ON DELETE CASCADE,
  cancelled        boolean NOT NULL DEFAULT false,
  created_at       timestamptz NOT NULL DEFAULT now()
);

-- A file in a store. `generation` changes when the file is added again: a workflow still indexing an earlier
-- generation cannot overwrite the new one.
CREATE TABLE vector_store_files (
  vector_store_id  text NOT NULL REFERENCES vector_stores(id) ON DELETE CASCADE,
  id               text NOT NULL,
  tenant_id        text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  filename         text NOT NULL,
  status           text NOT NULL CHECK (status IN ('in_progress', 'completed', 'cancelled', 'failed')),
  last_error       jsonb,
  usage_bytes      bigint NOT NULL DEFAULT 0,
  content          text,
  attributes       jsonb,
  max_chunk_tokens integer NOT NULL,
  overlap_tokens   integer NOT NULL,
  chunking_type    text NOT NULL CHECK (chunking_type IN ('auto', 'static')),
  batch_id         text REFERENCES vector_store_file_batches(id) ON DELETE SET NULL,
  generation       text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (vector_store_id, id)
);
CREATE INDEX vector_store_files_tenant_idx ON vector_store_files (tenant_id, vector_store_id, created_at, id);
CREATE INDEX vector_store_files_batch_idx ON vector_store_files (batch_id) WHERE batch_id IS NOT NULL;

-- A file's chunks: the text, its full-text vector and, when the provider embedded it, its embedding (real[]: the
-- service does not depend on pgvector; cosine similarity is computed over one store's chunks). Chunks are written in
-- groups as a file is read, under the file's generation: only the current generation's are ever searched, so a
-- reading that lost to a newer add of the file can leave nothing visible behind.
CREATE TABLE vector_store_chunks (
  id               bigserial PRIMARY KEY,
  tenant_id        text NOT NULL,
  vector_store_id  text NOT NULL,
  file_id          text NOT NULL,
  generation       text NOT NULL,
  ord              integer NOT NULL,
  text             text NOT NULL,
  tsv              tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
  embedding        real[],
  FOREIGN KEY (vector_store_id, file_id) REFERENCES vector_store_files (vector_store_id, id) ON DELETE CASCADE
);
CREATE INDEX vector_store_chunks_file_idx ON vector_store_chunks (vector_store_id, file_id, ord);
CREATE INDEX vector_store_chunks_tsv_idx ON vector_store_chunks USING gin (tsv);
