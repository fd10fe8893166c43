-- Every change to a credential that authentication reads is announced on `vend_credentials` in the
-- changing transaction itself, whatever wrote it (the API, vendctl, an operator's SQL), so each process's
-- in-memory credential registry (src/auth/registry.ts) can stay current. The payload is the row's whole
-- state as authentication needs it; a row too large for a notification is announced by hash only and re-read.
CREATE FUNCTION "api_keys_announce"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r "api_keys";
  payload text;
BEGIN
  IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
  payload := json_build_object(
    'kind', 'key',
    'hash', r.key_hash,
    'id', r.id,
    'account_id', r.account_id,
    'mode', r.mode,
    'expires_at', floor(extract(epoch FROM r.expires_at) * 1000)::bigint,
    'revoked_at', floor(extract(epoch FROM r.revoked_at) * 1000)::bigint,
    'allowed_cidrs', r.allowed_cidrs,
    'deleted', TG_OP = 'DELETE'
  )::text;
  IF octet_length(payload) > 7000 THEN
    payload := json_build_object('kind', 'key', 'hash', r.key_hash, 'reload', true)::text;
  END IF;
  PERFORM pg_notify('vend_credentials', payload);
  IF TG_OP = 'UPDATE' AND OLD.key_hash <> NEW.key_hash THEN
    PERFORM pg_notify('vend_credentials', json_build_object('kind', 'key', 'hash', OLD.key_hash, 'deleted', true)::text);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "api_keys_announce" AFTER INSERT OR DELETE OR UPDATE OF "key_hash", "account_id", "mode", "expires_at", "revoked_at", "allowed_cidrs"
  ON "api_keys" FOR EACH ROW EXECUTE FUNCTION "api_keys_announce"();
--> statement-breakpoint
CREATE FUNCTION "operators_announce"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r "operators";
BEGIN
  IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
  PERFORM pg_notify('vend_credentials', json_build_object(
    'kind', 'operator',
    'hash', r.token_hash,
    'id', r.id,
    'name', r.name,
    'role', r.role,
    'revoked_at', floor(extract(epoch FROM r.revoked_at) * 1000)::bigint,
    'deleted', TG_OP = 'DELETE'
  )::text);
  IF TG_OP = 'UPDATE' AND OLD.token_hash <> NEW.token_hash THEN
    PERFORM pg_notify('vend_credentials', json_build_object('kind', 'operator', 'hash', OLD.token_hash, 'deleted', true)::text);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "operators_announce" AFTER INSERT OR DELETE OR UPDATE OF "token_hash", "name", "role", "revoked_at"
  ON "operators" FOR EACH ROW EXECUTE FUNCTION "operators_announce"();
