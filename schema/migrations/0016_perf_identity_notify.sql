-- The gateway caches each tenant's saved profile (chat reads it on every request): a change to
-- tenant_identity is announced on the gateway channel like keys, feedback and limits.
CREATE OR REPLACE FUNCTION svc_gateway_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'api_keys' THEN
    PERFORM pg_notify('svc_gateway', 'key:' || NEW.id);
  ELSIF TG_TABLE_NAME = 'chat_feedback' THEN
    PERFORM pg_notify('svc_gateway', 'feedback:' || NEW.tenant_id);
  ELSIF TG_TABLE_NAME = 'rate_limits' THEN
    PERFORM pg_notify('svc_gateway', 'limits:' || coalesce(NEW.tenant_id, OLD.tenant_id));
  ELSIF TG_TABLE_NAME = 'tenant_identity' THEN
    PERFORM pg_notify('svc_gateway', 'identity:' || coalesce(NEW.tenant_id, OLD.tenant_id));
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER tenant_identity_gateway_notify AFTER INSERT OR UPDATE OR DELETE ON tenant_identity
  FOR EACH ROW EXECUTE FUNCTION svc_gateway_notify();
