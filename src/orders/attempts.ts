import { sql } from "drizzle-orm";
import { queryRows } from "../db/rows.ts";
import type { Executor } from "../db/transaction.ts";

/** The providers an order has been sent to (or was about to be), in order. */
export async function attemptedProviders(db: Executor, transactionId: string): Promise<string[]> {
  const rows = await queryRows<{ provider: string }>(
    db,
    sql`select provider from provider_attempts where transaction_id = ${transactionId}::uuid order by sent_at, id`,
  );
  return rows.map((r) => r.provider);
}

/** The request id an order is sent to its `n`th provider under: the reference for the first, then `<reference>-<n>`. */
export const requestIdFor = (reference: string, n: number) => (n <= 1 ? reference : `${reference}-${n}`);
