-- Webhook endpoints (/v1/webhooks): where a tenant is told, OpenAI's way (Standard Webhooks signatures), that its
-- background responses and batches ended. The signing secret is sealed with the service's `webhooks` key (it must be
-- read back to sign; it is shown to the tenant once, at creation). `events` empty: every event.
CREATE TABLE webhook_endpoints (
  id             text PRIMARY KEY,
  tenant_id      text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  url            text NOT NULL,
  events         text[] NOT NULL,
  secret_sealed  text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_tenant_idx ON webhook_endpoints (tenant_id, created_at);
