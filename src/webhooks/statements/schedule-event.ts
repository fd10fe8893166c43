import { sql } from "drizzle-orm";
import { cte } from "../../db/cte.ts";
import { queryRows, statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";
import type { Mode } from "../../lib/scope.ts";
import { notifyDue, scheduleDeliveries } from "./schedule-deliveries.ts";

export const scheduleEventStatementName = "webhooks.schedule_event";

const event = cte("event", ["id", "account_id", "mode", "type"]);

/**
 * Schedules an existing event for every endpoint that gets it now, due now, and wakes the delivery loop, in one
 * statement. With `reset` (a redelivery), an existing delivery for the same endpoint starts over; without it,
 * it is left as it is.
 */
export async function scheduleEventDeliveries(
  tx: Executor,
  existing: { id: string; accountId: string; mode: Mode },
  options: { reset: boolean } = { reset: false },
): Promise<void> {
  await queryRows(
    tx,
    sql`${statementLabel(scheduleEventStatementName)}with ${event.name} as (
      select id, account_id, mode, type from events where id = ${existing.id}
    ), ${scheduleDeliveries(event, options.reset ? "reset" : "keep")}
    select ${notifyDue(existing.id)} as webhooks_due`,
  );
}
