import { sql } from "drizzle-orm";
import { decodeRow, jsonRows, preparedStatement, statementLabel } from "../../../db/rows.ts";
import { sandboxOrders } from "../../../db/schema/index.ts";
import type { Executor } from "../../../db/transaction.ts";

export const claimDueCallbacksStatementName = "sandbox.claim_due_callbacks";

export type SandboxOrderRow = typeof sandboxOrders.$inferSelect;

/** The claim's text, built once (see `preparedStatement`). */
const claimStatement = preparedStatement<
  { limit: number; leaseMs: number },
  { taken: string | Record<string, unknown>[]; next_due_ms: number | string | null }
>(
  () => sql`${statementLabel(claimDueCallbacksStatementName)}with due as materialized (
          select reference, callback_due_at as due_at from sandbox_orders
          where callback_sent_at is null and callback_due_at <= now()
          order by callback_due_at
          limit ${sql.placeholder("limit")}::int
          for update skip locked
        ), taken as (
          -- The order takes its eventual status now (a re-query from here on finds it final), and its callback
          -- is leased: due again when the lease runs out, unless its send is marked done before.
          update sandbox_orders s
          set status = coalesce(s.eventual_status, s.status),
              callback_due_at = now() + ${sql.placeholder("leaseMs")}::int * interval '1 millisecond'
          from due d
          where s.reference = d.reference
          returning s.*, d.due_at
        )
        select coalesce((select json_agg(t order by t.due_at) from taken t), '[]') as taken,
               -- In seconds first (an hour at most), so a far-off time never overflows an interval.
               (select least(extract(epoch from min(callback_due_at)) - extract(epoch from now()), 3600) * 1000
                from sandbox_orders
                where callback_sent_at is null and reference not in (select reference from due))::float8 as next_due_ms`,
);

/**
 * Leases up to `limit` sandbox callbacks that are due, earliest first, in ONE statement (FOR UPDATE SKIP LOCKED, so
 * processes claim side by side): each order takes its eventual status, and its callback is due again `leaseMs`
 * later unless `markCallbacksSent` records its send first, so a process that dies between the claim and the
 * send loses nothing. Also says in how many ms the next callback it did not take is due (`nextDueMs`; none when
 * no callback waits), so the queue sleeps until then.
 */
export async function claimDueCallbacks(
  db: Executor,
  limit: number,
  leaseMs: number,
): Promise<SandboxOrderRow[] & { nextDueMs?: number }> {
  const [answer] = await claimStatement(db, { limit, leaseMs });
  const nextDue = answer?.next_due_ms;
  return Object.assign(
    jsonRows(answer?.taken).map((raw) => decodeRow(sandboxOrders, raw)),
    { nextDueMs: nextDue === null || nextDue === undefined ? undefined : Math.max(0, Number(nextDue)) },
  );
}
