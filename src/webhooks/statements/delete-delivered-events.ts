import { type SQL, sql } from "drizzle-orm";
import { statementLabel } from "../../db/rows.ts";
import type { RetentionStatement } from "../../retention/delete-batch.ts";

export const deleteDeliveredEventsStatementName = "webhooks.delete_delivered_events";

/**
 * Retention: events created before the cutoff that no delivery still has to carry, with their final deliveries
 * and those deliveries' attempts. Walks each account's side through the events listing index (account, mode,
 * created_at): no index of its own to write on every event for a setting that is off by default.
 */
export const deleteDeliveredEvents: RetentionStatement = {
  table: "events",
  alsoFrom: ["webhook_deliveries", "webhook_attempts"],
  build: (cutoff: SQL, limit: number) => sql`${statementLabel(deleteDeliveredEventsStatementName)}
      with doomed as (
        select old.id from accounts a cross join (values ('test'), ('live')) m(mode)
        cross join lateral (
          select e.id from events e
          where e.account_id = a.id and e.mode = m.mode and e.created_at < ${cutoff}
            and not exists (select 1 from webhook_deliveries p where p.event_id = e.id and p.status = 'pending')
          order by e.created_at nulls first limit ${limit} for update of e skip locked) old
        limit ${limit}),
      carried as (select d.id from webhook_deliveries d join doomed on d.event_id = doomed.id),
      attempts as (delete from webhook_attempts a using carried where a.delivery_id = carried.id returning 1),
      -- A delivery made pending again meanwhile (a resend) is left, and its event's delete then fails the statement.
      deliveries as (
        delete from webhook_deliveries d using carried where d.id = carried.id and d.status <> 'pending' returning 1),
      gone as (delete from events e using doomed where e.id = doomed.id returning 1)
      select (select count(*) from gone)::int as main, (select count(*) from deliveries)::int as webhook_deliveries,
        (select count(*) from attempts)::int as webhook_attempts`,
};
