-- OpenAI's Conversations API (/v1/conversations): a tenant's conversations and their items, in the order they were
-- added. A response made with `conversation` reads the items before its input and adds its input and output after.
-- Items are kept as the Responses API stores input items (json, as they were answered).
CREATE TABLE conversations (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  metadata    json NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX conversations_tenant_idx ON conversations (tenant_id, created_at);

CREATE TABLE conversation_items (
  seq             bigserial PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  conversation_id text NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  item_id         text NOT NULL,
  item            json NOT NULL,
  size_bytes      integer NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX conversation_items_conversation_idx ON conversation_items (conversation_id, seq);
CREATE INDEX conversation_items_item_idx ON conversation_items (conversation_id, item_id);
