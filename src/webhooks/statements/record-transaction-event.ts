import { sql } from "drizzle-orm";
import type { components } from "../../../generated/openapi-types.ts";
import { storedNow, storedNowIso } from "../../db/clock.ts";
import { cte } from "../../db/cte.ts";
import { queryRows, statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";
import { buildTransactionEvent } from "../outbox.ts";
import { notifyDue, scheduleDeliveries } from "./schedule-deliveries.ts";

type Transaction = components["schemas"]["Transaction"];

export const recordTransactionEventStatementName = "webhooks.record_transaction_event";

const event = cte("event", ["id", "account_id", "mode", "type"]);

/**
 * Records the event of an already-final transaction (as the API shows it) and schedules its deliveries, in
 * one statement. Completion writes its events inside its own statement (`emitEach`); this is for everything
 * else that needs an event for a transaction (fixtures, tools). Returns the event id.
 */
export async function enqueueTransactionEvent(tx: Executor, accountId: string, transaction: Transaction): Promise<string> {
  const built = buildTransactionEvent(transaction);
  const payload = JSON.stringify(built.payload);
  await queryRows(
    tx,
    sql`${statementLabel(recordTransactionEventStatementName)}with ${event.name} as (
      insert into events (id, account_id, mode, type, transaction_id, payload, created_at)
      select ${built.id}, ${accountId}::uuid, ${transaction.mode}, ${built.type}, ${transaction.id}::uuid,
             replace(${payload}, ${built.createdAt}, ${storedNowIso})::jsonb, ${storedNow}
      returning id, account_id, mode, type
    ), ${scheduleDeliveries(event, "none")}
    select ${notifyDue(built.id)} as webhooks_due`,
  );
  return built.id;
}
