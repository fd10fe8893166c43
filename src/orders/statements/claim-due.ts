import { sql } from "drizzle-orm";
import { decodeRow, jsonRows, plannedForOne, preparedStatement, statementLabel } from "../../db/rows.ts";
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

/** The claim's text, built once (see `preparedStatement`). */
const claimStatement = preparedStatement<
  { workerId: string; limit: number; leaseSeconds: number; commissions: string },
  { claimed: string | ClaimedRow[]; next_due_ms: number | string | null }
>(
  () => sql`${statementLabel(claimDueStatementName)}with due as materialized (
          -- What is due, oldest first, unlocked: the orders' own rows are locked next, so a claim takes its locks
          -- in the order every statement that moves an order does (the transaction, then its queue row).
          -- Planned for one order (see plannedForOne), so every later step reads by key, a young table included
          -- (test/processing/hot-statement-plans.test.ts).
          select id, created_at from (
            select q.transaction_id as id, q.created_at, row_number() over (order by q.due_at) as n
            from transaction_queue q
            where q.due_at <= now()
            order by q.due_at
            -- A subquery, so no plan knows the number: a custom plan would cost the same as the generic one, which
            -- PostgreSQL then keeps. With the number as a plain parameter every claim was planned anew (a custom
            -- plan for its size looked cheaper): 0.6 ms of planning per claim, three times its execution.
            limit (select ${sql.placeholder("limit")}::int)
          ) d
          where ${plannedForOne(sql`d.n`)}
        ), seen as materialized (
          -- Each order locked, skipping those another statement holds (a completion, another worker's claim), each
          -- by its own index lookup (a lateral subquery with "limit 1").
          select d.id, t.row_id, t.status, t.next_attempt_at, t.lease_expires_at
          from due d cross join lateral (
            select t.ctid as row_id, t.status, t.next_attempt_at, t.lease_expires_at from transactions t
            where t.id = d.id and t.created_at = d.created_at limit 1
            for update skip locked
          ) t
        ), missing as materialized (
          -- Not seen: locked by another statement, or gone. Only those are looked up again.
          select d.id from (select * from due where id not in (select id from seen)) d
          cross join lateral (
            select count(*) as found from (
              select 1 from transactions t where t.id = d.id and t.created_at = d.created_at limit 1
            ) t
          ) f
          where f.found = 0
        ), claimed as (
          update transactions t
          set status = case when t.status = 'queued' then 'processing' else t.status end,
              provider_sends = t.provider_sends + (case when t.status = 'queued' then 1 else 0 end),
              lease_owner = ${sql.placeholder("workerId")},
              lease_expires_at = now() + make_interval(secs => ${sql.placeholder("leaseSeconds")}),
              attempts = t.attempts + 1,
              updated_at = now()
          from seen s
          -- The rows this statement locked (no other can have moved them since), each fetched by its ctid.
          where t.ctid = s.row_id and t.id = s.id and t.status = s.status and t.next_attempt_at <= now()
            and (t.status = 'queued'
                 or (t.status in ('pending', 'processing') and (t.lease_expires_at is null or t.lease_expires_at < now())))
          returning t.*, s.status as previous_status
        ), leased as (
          update transaction_queue q set due_at = c.lease_expires_at from claimed c where q.transaction_id = c.id
        ), later as (
          -- Not claimable now (its lease was renewed, its re-query moved later): due again when it can be.
          update transaction_queue q
          set due_at = greatest(now(), case when s.status = 'queued' or s.lease_expires_at is null then s.next_attempt_at
                                            else greatest(s.next_attempt_at, s.lease_expires_at) end)
          from seen s
          where q.transaction_id = s.id and s.status in ('queued', 'processing', 'pending') and s.next_attempt_at is not null
            and s.id not in (select id from claimed)
        ), gone as (
          -- Final, its re-queries stopped, or deleted: no worker will claim it again.
          -- One list, by the queue's key (an OR of two would scan the whole queue, a backlog included).
          delete from transaction_queue q
          using (select id from seen where status not in ('queued', 'processing', 'pending') or next_attempt_at is null
                 union all select id from missing) g
          where q.transaction_id = g.id
        ), sent as (
          -- The provider's cost fixed at the send: face value less its commission (see src/providers/commission.ts).
          insert into provider_attempts (transaction_id, provider, request_id, status, cost_kobo)
          select c.id, c.provider, coalesce(c.provider_request_id, c.reference), 'sent',
                 c.amount_kobo - least(c.amount_kobo, coalesce((r.rule ->> 'fixed_kobo')::bigint,
                                                               c.amount_kobo * (r.rule ->> 'bps')::bigint / 10000, 0))
          from claimed c cross join lateral (
            select case when c.mode = 'test' then '{"bps": 10000}'::jsonb
                        else coalesce(t.rules -> (c.provider || '/' || c.service || '/' || c.network),
                                      t.rules -> (c.provider || '/' || c.service || '/*'),
                                      t.rules -> (c.provider || '/*/*')) end as rule
            from (select ${sql.placeholder("commissions")}::jsonb as rules) t
          ) r
          where c.previous_status = 'queued'
          on conflict (transaction_id, provider) do nothing
        )
        select coalesce((select json_agg(c) from claimed c), '[]') as claimed,
               -- In seconds first (an hour at most), so a far-off time (even 'infinity') never overflows an interval.
               (select least(extract(epoch from min(due_at)) - extract(epoch from now()), 3600) * 1000 from transaction_queue
                where transaction_id not in (select id from claimed))::float8 as next_due_ms`,
);

/**
 * Leases up to `limit` transactions that are due: new ones (`queued`), pending ones whose
 * re-query time has come, and `processing` ones whose worker lost its lease. FOR UPDATE SKIP
 * LOCKED lets any number of workers claim side by side; the lease keeps others off until it
 * expires. A new one moves to `processing`, and its send to the provider is counted here, before
 * it happens: a crash after the claim overcounts, never undercounts. Its attempt at the provider it was
 * routed to is recorded in the same statement, so where it went is known even if this worker dies, with
 * the provider's cost by `commissions` (`commissionTable`, a JSON text bound like the other values).
 *
 * It reads the small `transaction_queue` (what is due, oldest first), never the history of `transactions`, and
 * locks each order's row (skipping those another statement holds) before touching its queue row, the lock order
 * of every statement that moves an order, so a claim and a completion never wait on each other in a cycle;
 * the claimed rows come back whole in the same round trip. Its queue row is then due when the lease runs
 * out; one found not claimable yet (a renewed lease, a later re-query) is moved to when it will be, and
 * one that is final, stopped or gone leaves the queue. It says in how many ms the next order it did not
 * claim is due (`nextDueMs`; none when the queue holds no other), so a worker sleeps until then.
 */
export async function claimDueTransactions(
  db: Executor,
  workerId: string,
  limit: number,
  leaseSeconds: number,
  commissions = "{}",
): Promise<ClaimedTransaction[] & { nextDueMs?: number }> {
  const rows = await claimStatement(db, { workerId, limit, leaseSeconds, commissions });
  const [answer] = rows;
  const claimed = jsonRows(answer?.claimed);
  const nextDue = answer?.next_due_ms;
  return Object.assign(
    claimed.map((raw) => {
      const row = decodeRow(transactions, raw);
      return {
        id: row.id,
        reference: row.reference,
        previousStatus: raw.previous_status,
        leaseOwner: workerId,
        attempts: row.attempts,
        row,
      };
    }),
    { nextDueMs: nextDue === null || nextDue === undefined ? undefined : Math.max(0, Number(nextDue)) },
  );
}

type ClaimedRow = Record<string, unknown> & { previous_status: Status };
