import { sql } from "drizzle-orm";
import { newInstantToken, storedNow, storedNowIso } from "../../db/clock.ts";
import { cte } from "../../db/cte.ts";
import { queryRows, statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";
import { type AccountEvent, newEventId } from "../outbox.ts";
import { notifyDue, scheduleDeliveries } from "./schedule-deliveries.ts";

export const recordAccountEventStatementName = "webhooks.record_account_event";

const event = cte("event", ["id", "account_id", "mode", "type"]);

/**
 * Records an account event and schedules its deliveries (endpoints subscribed to its type), in one
 * statement on `tx`, so it commits or rolls back with the change it reports. Returns the event id.
 */
export async function enqueueAccountEvent(tx: Executor, accountEvent: AccountEvent): Promise<string> {
  const id = newEventId();
  const createdAt = newInstantToken();
  const payload = JSON.stringify({
    id,
    type: accountEvent.type,
    created_at: createdAt,
    mode: accountEvent.mode,
    data: accountEvent.data,
  });
  await queryRows(
    tx,
    sql`${statementLabel(recordAccountEventStatementName)}with ${event.name} as (
      insert into events (id, account_id, mode, type, transaction_id, payload, created_at)
      values (${id}, ${accountEvent.accountId}::uuid, ${accountEvent.mode}, ${accountEvent.type}, null,
              replace(${payload}, ${createdAt}, ${storedNowIso})::jsonb, ${storedNow})
      returning id, account_id, mode, type
    ), ${scheduleDeliveries(event, "none")} select ${notifyDue(id)} as webhooks_due`,
  );
  return id;
}
