-- Web capabilities: the per-tenant page cache of web-fetch, and research jobs.

-- One row per (tenant, URL, extraction options): the extracted page plus the validators
-- (ETag, Last-Modified) used to revalidate it once its TTL has passed.
CREATE TABLE web_cache (
  tenant_id      text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  cache_key      text NOT NULL,
  url            text NOT NULL,
  etag           text,
  last_modified  text,
  page           jsonb NOT NULL,
  fetched_at     timestamptz NOT NULL DEFAULT now(),
  expires_at     timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, cache_key)
);
CREATE INDEX web_cache_expires_idx ON web_cache (expires_at);

CREATE TABLE research_jobs (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  query        text NOT NULL,
  depth        text NOT NULL,
  max_sources  integer NOT NULL,
  status       text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
  stage        text NOT NULL DEFAULT 'queued',
  plan         jsonb,
  sources      jsonb NOT NULL DEFAULT '[]'::jsonb,
  report       jsonb,
  error        text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX research_jobs_tenant_idx ON research_jobs (tenant_id, created_at DESC, id DESC);
