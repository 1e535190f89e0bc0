-- Media and email (issue 15): outgoing emails with their delivery state, and generated images
-- stored content-addressed per tenant with unguessable, expiring links.

CREATE TABLE emails (
  id             text PRIMARY KEY,
  tenant_id      text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  to_addr        text NOT NULL,
  subject        text NOT NULL,
  body           text NOT NULL,
  html           text,
  from_addr      text NOT NULL,
  -- Stable across retries so receivers can de-duplicate a resend.
  message_id     text NOT NULL UNIQUE,
  status         text NOT NULL CHECK (status IN ('queued', 'sending', 'sent', 'failed', 'uncertain')),
  attempts       integer NOT NULL DEFAULT 0,
  -- Set once the whole message was handed to the SMTP connection (DATA complete on our side).
  data_sent_at   timestamptz,
  smtp_response  text,
  error          text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  sent_at        timestamptz
);
CREATE INDEX emails_tenant_created_idx ON emails (tenant_id, created_at DESC);

CREATE TABLE image_blobs (
  tenant_id     text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  sha256        text NOT NULL,
  content_type  text NOT NULL,
  bytes         bytea NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, sha256)
);

CREATE TABLE image_links (
  token       text PRIMARY KEY,
  tenant_id   text NOT NULL,
  sha256      text NOT NULL,
  expires_at  timestamptz NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (tenant_id, sha256) REFERENCES image_blobs (tenant_id, sha256) ON DELETE CASCADE
);
CREATE INDEX image_links_expires_idx ON image_links (expires_at);

-- Vision results saved as memories ("seen") carry the hash of the image they describe.
ALTER TABLE memories ADD COLUMN image_sha256 text;
