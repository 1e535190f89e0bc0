-- Stored responses of POST /v1/responses (store: true, OpenAI's default): the Response as it was answered, the items
-- of its own input, and the response it continues (previous_response_id). Kept 30 days, as OpenAI keeps them. json, not
-- jsonb: a response read back is the answer byte for byte, keys in their order.
CREATE TABLE responses (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  previous_id  text,
  input_items  json NOT NULL,
  response     json NOT NULL,
  -- What this turn adds to a conversation continued from it (its input and output, as JSON text).
  size_bytes   integer NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL
);
CREATE INDEX responses_tenant_expires_idx ON responses (tenant_id, expires_at);
