import { sql } from "drizzle-orm";
import type { Mode } from "../auth/keys.ts";
import { events } from "../db/schema/index.ts";
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

/**
 * The outbox: called in the same database transaction as the final state change. Writes the
 * event and one pending delivery per current endpoint of the account and mode; the NOTIFY is
 * delivered on commit and wakes the delivery worker.
 */
export async function enqueueTransactionEvent(tx: Executor, row: TransactionRow): Promise<string> {
  const id = `evt_${randomBase62(24)}`;
  const type = row.status === "successful" ? "transaction.successful" : "transaction.failed";
  const createdAt = new Date();
  const payload = { id, type, created_at: createdAt.toISOString(), mode: row.mode, data: presentTransaction(row) };
  await tx
    .insert(events)
    .values({ id, accountId: row.accountId, mode: row.mode, type, transactionId: row.id, payload, createdAt });
  await scheduleEventDeliveries(tx, { id, accountId: row.accountId, mode: row.mode });
  return id;
}
