-- Which webhook endpoints get an event, in one place that every statement scheduling deliveries calls: the
-- outbox's statements (src/webhooks/statements/) and the low-balance trigger below, which until now held a copy
-- of the rule in plpgsql. An endpoint gets an event when it belongs to the event's account and mode, is not
-- deleted, is enabled, and is subscribed to the event's type (no subscription list: every type).
-- Both are plain SQL functions, not STRICT, not SECURITY DEFINER and with no SET, so the planner inlines them
-- into the calling statement (the same join through the endpoints' (account_id, mode) index as before, nothing
-- called per row), and they run with the caller's rights: the service's role reads webhook_endpoints already,
-- and EXECUTE on a new function is granted to PUBLIC (`vend migrate` grants it to the service's role as well).
CREATE FUNCTION "vend_webhook_subscribed"(subscribed_types text[], event_type text) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS 'SELECT subscribed_types IS NULL OR event_type = ANY (subscribed_types)';
--> statement-breakpoint
CREATE FUNCTION "vend_webhook_endpoints_for"(for_account uuid, for_mode text, event_type text)
  RETURNS TABLE ("endpoint_id" uuid) LANGUAGE sql STABLE PARALLEL SAFE
  AS 'SELECT e.id FROM webhook_endpoints e
      WHERE e.account_id = for_account AND e.mode = for_mode AND e.deleted_at IS NULL AND e.enabled
        AND vend_webhook_subscribed(e.event_types, event_type)';
--> statement-breakpoint
-- Migration 0009's low-balance alert, unchanged but for its deliveries, which now come from the rule above.
-- Its NOTIFY names the channel delivery listens on (`webhookDueChannel` in src/db/channels.ts): SQL cannot
-- import that constant, so this literal is its one copy, held to it by test/webhooks/endpoint-rule.test.ts.
CREATE OR REPLACE FUNCTION "wallets_low_balance_alert"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  available bigint := NEW.balance_kobo - NEW.held_kobo;
  alphabet constant text := '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  new_event_id text;
  event_at timestamptz := date_trunc('milliseconds', clock_timestamp());
  scheduled integer;
BEGIN
  IF NEW.low_balance_threshold_kobo IS NULL OR available >= NEW.low_balance_threshold_kobo THEN
    NEW.low_balance_alerted := false;
    RETURN NEW;
  END IF;
  IF OLD.low_balance_alerted THEN
    NEW.low_balance_alerted := true;
    RETURN NEW;
  END IF;
  NEW.low_balance_alerted := true;
  SELECT 'evt_' || string_agg(substr(alphabet, get_byte(b.bytes, i) % 62 + 1, 1), '' ORDER BY i) INTO new_event_id
  FROM (SELECT uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) AS bytes) b, generate_series(0, 23) i;
  INSERT INTO events (id, account_id, mode, type, transaction_id, payload, created_at)
  VALUES (new_event_id, NEW.account_id, NEW.mode, 'wallet.balance_low', NULL,
    jsonb_build_object(
      'id', new_event_id,
      'type', 'wallet.balance_low',
      'created_at', to_char(event_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'mode', NEW.mode,
      'data', jsonb_build_object(
        'mode', NEW.mode,
        'currency', 'NGN',
        'balance_kobo', NEW.balance_kobo,
        'held_kobo', NEW.held_kobo,
        'available_kobo', available,
        'threshold_kobo', NEW.low_balance_threshold_kobo)),
    event_at);
  INSERT INTO webhook_deliveries (event_id, endpoint_id, status, next_attempt_at)
  SELECT new_event_id, r.endpoint_id, 'pending', now()
  FROM vend_webhook_endpoints_for(NEW.account_id, NEW.mode, 'wallet.balance_low') r;
  GET DIAGNOSTICS scheduled = ROW_COUNT;
  IF scheduled > 0 THEN
    PERFORM pg_notify('vend_webhook_due', new_event_id);
  END IF;
  RETURN NEW;
END
$$;
