import { type SQL, sql } from "drizzle-orm";
import { statementLabel } from "../../../db/rows.ts";
import type { RetentionStatement } from "../../../retention/delete-batch.ts";

export const deleteFinalOrdersStatementName = "sandbox.delete_final_orders";

const finalTransaction = sql`('successful', 'failed', 'reversed', 'refunded')`;

/**
 * Retention: the sandbox's orders created before the cutoff whose transaction is final (found by the request id
 * it was sent under) and whose callback, if any, was sent: an open order may still be re-queried.
 */
export const deleteFinalOrders: RetentionStatement = {
  table: "sandbox_orders",
  build: (cutoff: SQL, limit: number) => sql`${statementLabel(deleteFinalOrdersStatementName)}
      with doomed as (
        select s.reference from sandbox_orders s
        where s.created_at < ${cutoff} and (s.callback_due_at is null or s.callback_sent_at is not null)
          and exists (
            select 1 from provider_attempts pa join transactions t on t.id = pa.transaction_id
            where pa.provider = 'sandbox' and pa.request_id = s.reference and t.status in ${finalTransaction})
        order by s.created_at limit ${limit} for update of s skip locked),
      gone as (delete from sandbox_orders s using doomed where s.reference = doomed.reference returning 1)
      select count(*)::int as main from gone`,
};
