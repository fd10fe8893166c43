import { sql } from "drizzle-orm";
import { events } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { randomBase62 } from "../lib/random.ts";
import { presentTransaction, type TransactionRow } from "../transactions/present.ts";

export const webhookDueChannel = "vend_webhook_due";

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
  await tx.insert(events).values({ id, accountId: row.accountId, mode: row.mode, type, transactionId: row.id, payload, createdAt });
  await tx.execute(sql`
    insert into webhook_deliveries (event_id, endpoint_id, status, next_attempt_at)
    select ${id}, e.id, 'pending', now() from webhook_endpoints e
    where e.account_id = ${row.accountId}::uuid and e.mode = ${row.mode} and e.deleted_at is null`);
  await tx.execute(sql`select pg_notify(${webhookDueChannel}, ${id})`);
  return id;
}
