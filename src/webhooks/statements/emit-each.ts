import { type SQL, sql } from "drizzle-orm";
import { storedNow } from "../../db/clock.ts";
import { type Cte, cte } from "../../db/cte.ts";
import { notifyAnyDue, scheduleDeliveries } from "./schedule-deliveries.ts";

/** The events of transactions, one per row: its id, type and payload, the transaction (`id`) and its account and mode. */
export type TransactionEvents = Cte<"event_id" | "event_type" | "payload" | "account_id" | "mode" | "id">;

/**
 * The outbox as parts of the caller's statement. `parts` is `event as (…), deliveries as (…)`; `notify` is a
 * select-list expression for the caller's final select: a NOTIFY on `webhookDueChannel`, delivered on commit,
 * when a delivery was scheduled.
 */
export interface EmittedEvent {
  parts: SQL;
  notify: SQL;
}

const event = cte("event", ["id", "account_id", "mode", "type"]);

/**
 * The events of several transactions as parts of one statement (the completion, src/orders/statements/complete.ts):
 * for each row of the caller's CTE `events` (`payload` jsonb) its event row, created now (the database clock),
 * and one pending delivery per endpoint that gets it. `notify` wakes delivery ONCE for the whole statement, when
 * any delivery was scheduled.
 */
export function emitEach(events: TransactionEvents): EmittedEvent {
  const c = events.column;
  const parts = sql`${event.name} as (
      insert into events (id, account_id, mode, type, transaction_id, payload, created_at)
      select ${c.event_id}, ${c.account_id}, ${c.mode}, ${c.event_type}, ${c.id}, ${c.payload}, ${storedNow} from ${events.name}
      returning id, account_id, mode, type
    ), ${scheduleDeliveries(event, "none")}`;
  return { parts, notify: notifyAnyDue };
}
