import { inArray, sql } from "drizzle-orm";
import { queryRows } from "../db/rows.ts";
import { transactions } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import type { Status } from "../processing/transitions.ts";
import type { TransactionRow } from "../transactions/present.ts";

export interface ClaimedTransaction {
  id: string;
  reference: string;
  previousStatus: Status;
  attempts: number;
  /** The row as claimed (read in one query for the whole batch). */
  row: TransactionRow;
}

/**
 * Leases up to `limit` transactions that are due: new ones (`queued`), pending ones whose
 * re-query time has come, and `processing` ones whose worker lost its lease. FOR UPDATE SKIP
 * LOCKED lets any number of workers claim side by side; the lease keeps others off until it
 * expires. A new one moves to `processing`.
 */
export async function claimDueTransactions(
  db: Executor,
  workerId: string,
  limit: number,
  leaseSeconds: number,
): Promise<ClaimedTransaction[]> {
  const rows = await queryRows<{ id: string; reference: string; previous_status: Status; attempts: number }>(
    db,
    sql`with due as (
          select id, status as previous_status from transactions
          where next_attempt_at <= now()
            and (status = 'queued'
                 or (status in ('pending', 'processing') and (lease_expires_at is null or lease_expires_at < now())))
          order by next_attempt_at
          limit ${limit}
          for update skip locked
        )
        update transactions t
        set status = case when t.status = 'queued' then 'processing' else t.status end,
            lease_owner = ${workerId},
            lease_expires_at = now() + make_interval(secs => ${leaseSeconds}),
            attempts = t.attempts + 1,
            updated_at = now()
        from due where t.id = due.id
        returning t.id, t.reference, due.previous_status, t.attempts`,
  );
  if (rows.length === 0) return [];
  const full = await db
    .select()
    .from(transactions)
    .where(
      inArray(
        transactions.id,
        rows.map((r) => r.id),
      ),
    );
  const byId = new Map(full.map((row) => [row.id, row]));
  return rows.flatMap((r) => {
    const row = byId.get(r.id);
    return row
      ? [{ id: r.id, reference: r.reference, previousStatus: r.previous_status, attempts: Number(r.attempts), row }]
      : [];
  });
}

/** Gives back leases this worker still holds (graceful shutdown): others may take them at once. */
export async function releaseLeases(db: Executor, workerId: string): Promise<void> {
  await db.execute(
    sql`update transactions set lease_expires_at = now() where lease_owner = ${workerId} and status in ('processing', 'pending')`,
  );
}
