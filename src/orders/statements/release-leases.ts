import { sql } from "drizzle-orm";
import { cte } from "../../db/cte.ts";
import { queryRows, statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";
import type { ClaimedTransaction } from "./claim-due.ts";
import { requeue } from "./requeue.ts";

export const releaseLeasesStatementName = "orders.release_leases";

const released = cte("released", ["id", "created_at", "next_attempt_at"]);

export interface ReleasedLeases {
  /** Orders given back: due now (or at their next re-query), for any worker to claim. */
  released: number;
  /** Orders of this worker left leased because another statement held their rows: try again shortly. */
  skipped: number;
}

/**
 * Gives back the leases this worker holds (one run out is claimable already), except those of the claims
 * in `keep` (its jobs still running): at a graceful stop all of them; after a database fault, those of
 * claims no job of it runs any more (a job that ended on the fault, a claim whose answer never arrived), so
 * they are claimed again at once instead of when the lease runs out. Rows are locked in id order, as the
 * heartbeat and a batch completion lock them, skipping any another statement holds (an unfinished
 * transaction of a connection lost in the fault holds its rows until the server ends it): `skipped`.
 */
export async function releaseLeases(
  db: Executor,
  workerId: string,
  keep: readonly Pick<ClaimedTransaction, "id" | "attempts">[] = [],
): Promise<ReleasedLeases> {
  const [row] = await queryRows<{ released: number; skipped: number }>(
    db,
    sql`${statementLabel(releaseLeasesStatementName)}with mine as materialized (
          select t.id, t.created_at from transaction_queue q
          join transactions t on t.id = q.transaction_id and t.created_at = q.created_at
          where t.lease_owner = ${workerId} and t.status in ('processing', 'pending') and t.lease_expires_at > now()
            and (t.id, t.attempts) not in (select * from unnest(${sql.param(keep.map((c) => c.id))}::uuid[],
                                                                ${sql.param(keep.map((c) => c.attempts))}::int[]))
        ), held as materialized (
          select t.id, t.created_at from transactions t
          where (t.id, t.created_at) in (select id, created_at from mine)
            and t.lease_owner = ${workerId} and t.status in ('processing', 'pending') and t.lease_expires_at > now()
          order by t.id
          for update skip locked
        ), released as (
          update transactions t set lease_expires_at = now()
          from held h where t.id = h.id and t.created_at = h.created_at
          returning t.id, t.created_at, greatest(t.next_attempt_at, now()) as next_attempt_at
        ), ${requeue(released)}
        select (select count(*) from released)::int as released,
               ((select count(*) from mine) - (select count(*) from held))::int as skipped`,
  );
  return { released: Number(row?.released ?? 0), skipped: Number(row?.skipped ?? 0) };
}
