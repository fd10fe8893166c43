import { type SQL, sql } from "drizzle-orm";
import { webhookDueChannel } from "../../db/channels.ts";
import { type Cte, cte } from "../../db/cte.ts";

/** Events whose deliveries a statement schedules: each event's id, account, mode and type. */
export type DeliverableEvents = Cte<"id" | "account_id" | "mode" | "type">;

/** What scheduling does with an endpoint's existing delivery of the event: a new event has none. */
export type ExistingDelivery = "none" | "keep" | "reset";

/** The deliveries `scheduleDeliveries` wrote: the event of each. */
const scheduled = cte("deliveries", ["event_id"]);

/**
 * The assignments that start a delivery over (a redelivery): pending and due now, its attempt count and last
 * result cleared, its lease dropped.
 */
export const deliveryStartsOver = sql`status = 'pending', attempts = 0, next_attempt_at = now(), lease_expires_at = null,
      last_status_code = null, last_error = null, updated_at = now()`;

const onConflict: Record<ExistingDelivery, SQL> = {
  none: sql``,
  keep: sql` on conflict (event_id, endpoint_id) do nothing`,
  reset: sql` on conflict (event_id, endpoint_id) do update set ${deliveryStartsOver}`,
};

/**
 * `deliveries as (…)`: one pending delivery, due now, for each event of `events` and each endpoint that gets it,
 * as the database's one rule says (`vend_webhook_endpoints_for`, migration 0020: the endpoints of the event's
 * account and mode that are not deleted, enabled and subscribed to its type; the low-balance trigger calls it
 * too). An existing delivery for the same endpoint is kept as it is or, with `reset`, starts over.
 */
export function scheduleDeliveries(events: DeliverableEvents, existing: ExistingDelivery): SQL {
  const { id, account_id, mode, type } = events.column;
  return sql`${scheduled.name} as (
      insert into webhook_deliveries (event_id, endpoint_id, status, next_attempt_at)
      select ${id}, r.endpoint_id, 'pending', now() from ${events.name}
      cross join lateral vend_webhook_endpoints_for(${account_id}, ${mode}, ${type}) r${onConflict[existing]}
      returning event_id
    )`;
}

/**
 * A select-list expression for the statement's final select: a NOTIFY on `webhookDueChannel` (delivered on
 * commit), once for the whole statement, when its `scheduleDeliveries` wrote any delivery.
 */
export const notifyAnyDue: SQL = sql`(select pg_notify(${webhookDueChannel}, min(${scheduled.column.event_id}))
      from ${scheduled.name} having count(*) > 0)`;

/** As `notifyAnyDue`, naming the one event the statement wrote. */
export const notifyDue = (eventId: string): SQL =>
  sql`(select pg_notify(${webhookDueChannel}, ${eventId}) where exists (select 1 from ${scheduled.name}))`;
