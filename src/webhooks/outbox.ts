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

/** The `transaction.successful|failed` event for a final row: its id, type and the payload sent to webhooks. */
export function buildTransactionEvent(row: TransactionRow) {
  const id = `evt_${randomBase62(24)}`;
  const type: "transaction.successful" | "transaction.failed" =
    row.status === "successful" ? "transaction.successful" : "transaction.failed";
  const createdAt = new Date().toISOString();
  return { id, type, createdAt, payload: { id, type, created_at: createdAt, mode: row.mode, data: presentTransaction(row) } };
}

/**
 * Records the event of an already-final transaction and schedules its deliveries. The completion
 * statement (processing/transitions.ts) writes events inline, in the same statement as the state
 * change; this is for everything else that needs an event for a row (fixtures, tools).
 */
export async function enqueueTransactionEvent(tx: Executor, row: TransactionRow): Promise<string> {
  const { id, type, createdAt, payload } = buildTransactionEvent(row);
  await tx.insert(events).values({
    id,
    accountId: row.accountId,
    mode: row.mode,
    type,
    transactionId: row.id,
    payload,
    createdAt: new Date(createdAt),
  });
  await scheduleEventDeliveries(tx, { id, accountId: row.accountId, mode: row.mode });
  return id;
}
