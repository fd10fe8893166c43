import { sql } from "drizzle-orm";
import type { Mode } from "../auth/keys.ts";
import { queryRows } from "../db/rows.ts";
import type { Executor } from "../db/transaction.ts";
import { randomBase62 } from "../lib/random.ts";
import { presentTransaction, type TransactionRow } from "../transactions/present.ts";

export const webhookDueChannel = "vend_webhook_due";

/**
 * One pending delivery, due now, per current endpoint of the event's account and mode, then a NOTIFY
 * (delivered on commit) that wakes the delivery loop. With `reset`, an existing delivery for the same
 * endpoint starts over (pending, attempt count and last result cleared, lease dropped).
 */
export async function scheduleEventDeliveries(
  tx: Executor,
  event: { id: string; accountId: string; mode: Mode },
  options: { reset: boolean } = { reset: false },
): Promise<void> {
  const onConflict = options.reset
    ? sql`on conflict (event_id, endpoint_id) do update set status = 'pending', attempts = 0, next_attempt_at = now(),
        lease_expires_at = null, last_status_code = null, last_error = null, updated_at = now()`
    : sql`on conflict (event_id, endpoint_id) do nothing`;
  await tx.execute(sql`
    insert into webhook_deliveries (event_id, endpoint_id, status, next_attempt_at)
    select ${event.id}, e.id, 'pending', now() from webhook_endpoints e
    where e.account_id = ${event.accountId}::uuid and e.mode = ${event.mode} and e.deleted_at is null
    ${onConflict}`);
  await tx.execute(sql`select pg_notify(${webhookDueChannel}, ${event.id})`);
}

/** The `transaction.successful|failed` event for a final row: its id, type and the payload sent to webhooks. */
export function buildTransactionEvent(row: TransactionRow) {
  const id = `evt_${randomBase62(24)}`;
  const type = row.status === "successful" ? "transaction.successful" : "transaction.failed";
  const createdAt = new Date().toISOString();
  return { id, type, createdAt, payload: { id, type, created_at: createdAt, mode: row.mode, data: presentTransaction(row) } };
}

/**
 * The outbox: called in the same database transaction as the final state change. Writes the
 * event and one pending delivery per current endpoint of the account and mode, and NOTIFYs the
 * delivery workers (only if there is something to deliver) and anyone waiting on the reference
 * (both delivered on commit), in one statement.
 */
export async function enqueueTransactionEvent(tx: Executor, row: TransactionRow, finalChannel?: string): Promise<string> {
  const { id, type, createdAt, payload } = buildTransactionEvent(row);
  await queryRows(
    tx,
    sql`with event as (
          insert into events (id, account_id, mode, type, transaction_id, payload, created_at)
          values (${id}, ${row.accountId}::uuid, ${row.mode}, ${type}, ${row.id}::uuid, ${JSON.stringify(payload)}::jsonb, ${createdAt}::timestamptz)
          returning id, account_id, mode
        ), deliveries as (
          insert into webhook_deliveries (event_id, endpoint_id, status, next_attempt_at)
          select event.id, e.id, 'pending', now() from event
          join webhook_endpoints e on e.account_id = event.account_id and e.mode = event.mode and e.deleted_at is null
          returning event_id
        )
        select (select pg_notify(${webhookDueChannel}, id) where exists (select 1 from deliveries)),
               (select pg_notify(${finalChannel ?? webhookDueChannel}, ${finalChannel ? row.reference : id}) where ${finalChannel !== undefined})
        from event`,
  );
  return id;
}
