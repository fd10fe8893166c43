import { inArray, sql } from "drizzle-orm";
import { queryRows, statementLabel } from "../../db/rows.ts";
import { transactions } from "../../db/schema/index.ts";
import type { Executor } from "../../db/transaction.ts";
import type { Status } from "../states.ts";
import type { TransactionRow } from "../view.ts";

export const claimDueStatementName = "orders.claim_due";

export interface ClaimedTransaction {
  id: string;
  reference: string;
  previousStatus: Status;
  /** The worker holding the lease. With `attempts` it names this one claim: a later claim bumps `attempts`. */
  leaseOwner: string;
  attempts: number;
  /** The row as claimed (read in one query for the whole batch). */
  row: TransactionRow;
}

/** What identifies one claim's lease: guarded updates match both, so a claim taken over changes nothing. */
export type LeaseHold = Pick<ClaimedTransaction, "leaseOwner" | "attempts">;

/**
 * Leases up to `limit` transactions that are due: new ones (`queued`), pending ones whose
 * re-query time has come, and `processing` ones whose worker lost its lease. FOR UPDATE SKIP
 * LOCKED lets any number of workers claim side by side; the lease keeps others off until it
 * expires. A new one moves to `processing`, and its send to the provider is counted here, before
 * it happens: a crash after the claim overcounts, never undercounts. Its attempt at the provider it was
 * routed to is recorded in the same statement, so where it went is known even if this worker dies.
 */
export async function claimDueTransactions(
  db: Executor,
  workerId: string,
  limit: number,
  leaseSeconds: number,
): Promise<ClaimedTransaction[]> {
  const rows = await queryRows<{ id: string; reference: string; previous_status: Status; attempts: number }>(
    db,
    sql`${statementLabel(claimDueStatementName)}with due as (
          select id, status as previous_status from transactions
          where next_attempt_at <= now()
            and (status = 'queued'
                 or (status in ('pending', 'processing') and (lease_expires_at is null or lease_expires_at < now())))
          order by next_attempt_at
          limit ${limit}
          for update skip locked
        ), claimed as (
          update transactions t
          set status = case when t.status = 'queued' then 'processing' else t.status end,
              provider_sends = t.provider_sends + (case when t.status = 'queued' then 1 else 0 end),
              lease_owner = ${workerId},
              lease_expires_at = now() + make_interval(secs => ${leaseSeconds}),
              attempts = t.attempts + 1,
              updated_at = now()
          from due where t.id = due.id
          returning t.id, t.reference, t.provider, t.provider_request_id, due.previous_status, t.attempts
        ), sent as (
          insert into provider_attempts (transaction_id, provider, request_id, status)
          select id, provider, coalesce(provider_request_id, reference), 'sent' from claimed where previous_status = 'queued'
          on conflict (transaction_id, provider) do nothing
        )
        select id, reference, previous_status, attempts from claimed`,
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
      ? [
          {
            id: r.id,
            reference: r.reference,
            previousStatus: r.previous_status,
            leaseOwner: workerId,
            attempts: Number(r.attempts),
            row,
          },
        ]
      : [];
  });
}
