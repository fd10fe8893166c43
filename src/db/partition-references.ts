import { sql } from "drizzle-orm";
import { queryRows } from "./rows.ts";
import type { Executor } from "./transaction.ts";

/**
 * The references that lost their foreign key in migration 0012 (a foreign key cannot point at a table
 * partitioned on a column it does not hold). Each is written from the referenced row in the same statement
 * (the claim's attempt from the claimed transaction, a delivery from its event, an anomaly from the order
 * it found), and transactions and events are never deleted; this check proves it after the fact.
 */
const references = {
  "provider_attempts.transaction_id": sql`select count(*)::int as n from provider_attempts a
    where not exists (select 1 from transactions t where t.id = a.transaction_id)`,
  "provider_anomalies.transaction_id": sql`select count(*)::int as n from provider_anomalies a
    where a.transaction_id is not null and not exists (select 1 from transactions t where t.id = a.transaction_id)`,
  "webhook_deliveries.event_id": sql`select count(*)::int as n from webhook_deliveries d
    where not exists (select 1 from events e where e.id = d.event_id)`,
};

export type CheckedReference = keyof typeof references;

/** Rows whose reference names no row, per reference; all zero when every reference holds. */
export async function danglingReferences(db: Executor): Promise<Record<CheckedReference, number>> {
  const counts = {} as Record<CheckedReference, number>;
  for (const [name, query] of Object.entries(references) as [CheckedReference, (typeof references)[CheckedReference]][]) {
    const [row] = await queryRows<{ n: number }>(db, query);
    counts[name] = Number(row?.n ?? 0);
  }
  return counts;
}
