-- Low-balance alerts, on every path that moves a wallet (vend and batch holds, completions, fundings,
-- operator credits, a new threshold): each wallet update goes through this trigger, which sees the row as
-- it was (OLD, the latest committed version once the row lock is held) and as it will be (NEW). When the
-- available balance is below the threshold and the wallet was not yet alerted, it marks the wallet alerted
-- and records the `wallet.balance_low` event with its deliveries, in the same database transaction; when
-- the available balance is at or above the threshold again (or there is no threshold), it re-arms.
-- Concurrent updates of one wallet are serialised by its row lock, so each crossing alerts exactly once.
-- Deliveries follow the outbox's rule (src/ledger/outbox.ts, scheduleDeliveries): endpoints of the
-- account and mode not deleted, enabled, and subscribed to the type (no list: every type).
CREATE FUNCTION "wallets_low_balance_alert"() RETURNS trigger LANGUAGE plpgsql AS $$
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
  SELECT new_event_id, e.id, 'pending', now() FROM webhook_endpoints e
  WHERE e.account_id = NEW.account_id AND e.mode = NEW.mode AND e.deleted_at IS NULL AND e.enabled
    AND (e.event_types IS NULL OR 'wallet.balance_low' = ANY (e.event_types));
  GET DIAGNOSTICS scheduled = ROW_COUNT;
  IF scheduled > 0 THEN
    PERFORM pg_notify('vend_webhook_due', new_event_id);
  END IF;
  RETURN NEW;
END
$$;
--> statement-breakpoint
-- Wallets with no threshold and no pending re-arm never call the function: the vend hot path stays as it was.
CREATE TRIGGER "wallets_low_balance_alert" BEFORE UPDATE ON "wallets" FOR EACH ROW
  WHEN (NEW.low_balance_threshold_kobo IS NOT NULL OR OLD.low_balance_alerted)
  EXECUTE FUNCTION "wallets_low_balance_alert"();
