import { type SQL, sql } from "drizzle-orm";
import { statementLabel } from "../../db/rows.ts";
import type { RetentionStatement } from "../../retention/delete-batch.ts";

export const deleteFinalDeliveriesStatementName = "webhooks.delete_final_deliveries";

/**
 * Retention: the deliveries in `status` last changed before the cutoff, with the attempts they take with them. The
 * rows are locked with SKIP LOCKED, so passes in several processes take different rows, and a delivery being sent
 * (pending) is never taken.
 */
export const deleteFinalDeliveries = (status: "succeeded" | "failed"): RetentionStatement => ({
  table: "webhook_deliveries",
  alsoFrom: ["webhook_attempts"],
  build: (cutoff: SQL, limit: number) => sql`${statementLabel(deleteFinalDeliveriesStatementName)}
    with doomed as (
      select id from webhook_deliveries
      where status = ${status} and status <> 'pending' and updated_at < ${cutoff}
      order by updated_at limit ${limit} for update skip locked),
    attempts as (delete from webhook_attempts a using doomed where a.delivery_id = doomed.id returning 1),
    gone as (delete from webhook_deliveries d using doomed where d.id = doomed.id returning 1)
    select (select count(*) from gone)::int as main, (select count(*) from attempts)::int as webhook_attempts`,
});
