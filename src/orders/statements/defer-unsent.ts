import { sql } from "drizzle-orm";
import { cte } from "../../db/cte.ts";
import { queryRows, statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";
import type { TransactionRow } from "../view.ts";
import type { LeaseHold } from "./claim-due.ts";
import { requeue } from "./requeue.ts";

const moved = cte("txn", ["id", "created_at", "next_attempt_at"]);

export const deferUnsentStatementName = "orders.defer_unsent";

/**
 * A new order none of whose providers may take it now (all disabled, or breakers open): back to
 * `queued`, its counted send and its unsent attempt undone, to be claimed again after `delayMs`.
 */
export async function deferUnsent(db: Executor, row: TransactionRow, claim: LeaseHold, delayMs: number): Promise<boolean> {
  const [deferred] = await queryRows<{ id: string }>(
    db,
    sql`${statementLabel(deferUnsentStatementName)}with txn as (
          update transactions
          set status = 'queued', provider_sends = greatest(provider_sends - 1, 0), lease_owner = null, lease_expires_at = null,
              next_attempt_at = now() + make_interval(secs => ${delayMs / 1000}), updated_at = now()
          where id = ${row.id}::uuid and lease_owner = ${claim.leaseOwner} and attempts = ${claim.attempts} and status = 'processing'
          returning id, created_at, next_attempt_at
        ), ${requeue(moved)}, unsent as (
          delete from provider_attempts where transaction_id = (select id from txn) and status = 'sent'
        )
        select id from txn`,
  );
  return deferred !== undefined;
}
