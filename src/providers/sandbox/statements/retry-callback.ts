import { sql } from "drizzle-orm";
import { queryRows, statementLabel } from "../../../db/rows.ts";
import type { Executor } from "../../../db/transaction.ts";

export const retryCallbackStatementName = "sandbox.retry_callback";

/** A callback whose send failed is due again `afterMs` from now (its lease shortened), unless it was sent meanwhile. */
export async function retryCallback(db: Executor, reference: string, afterMs: number): Promise<void> {
  await queryRows(
    db,
    sql`${statementLabel(retryCallbackStatementName)}update sandbox_orders
        set callback_due_at = now() + ${afterMs}::int * interval '1 millisecond'
        where reference = ${reference} and callback_sent_at is null`,
  );
}
