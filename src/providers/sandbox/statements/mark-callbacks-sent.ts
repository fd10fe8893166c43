import { sql } from "drizzle-orm";
import { queryRows, statementLabel } from "../../../db/rows.ts";
import type { Executor } from "../../../db/transaction.ts";

export const markCallbacksSentStatementName = "sandbox.mark_callbacks_sent";

/** Records that these orders' callbacks were sent (answered): none is sent again. One statement for the batch. */
export async function markCallbacksSent(db: Executor, references: readonly string[]): Promise<void> {
  await queryRows(
    db,
    sql`${statementLabel(markCallbacksSentStatementName)}update sandbox_orders set callback_sent_at = now()
        where reference = any(${sql.param([...references])}::text[]) and callback_sent_at is null`,
  );
}
