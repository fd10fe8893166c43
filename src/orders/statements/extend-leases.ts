import { sql } from "drizzle-orm";
import { queryRows, statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";
import type { ClaimedTransaction } from "./claim-due.ts";

export const extendLeasesStatementName = "orders.extend_leases";

/**
 * The heartbeat: extends, in one statement, the leases of the claims this worker is still working
 * on. Returns the keys (`id:attempts`) still held; a claim missing from them was taken over. Rows
 * are locked in id order, as a batch completion locks them, so the two never wait on each other.
 */
export async function extendLeases(
  db: Executor,
  workerId: string,
  claims: readonly Pick<ClaimedTransaction, "id" | "attempts">[],
  leaseSeconds: number,
): Promise<Set<string>> {
  if (claims.length === 0) return new Set();
  const rows = await queryRows<{ id: string; attempts: number }>(
    db,
    sql`${statementLabel(extendLeasesStatementName)}with held as (
          select id from transactions
          where lease_owner = ${workerId} and status in ('processing', 'pending')
            and (id, attempts) in (select * from unnest(${sql.param(claims.map((c) => c.id))}::uuid[],
                                                        ${sql.param(claims.map((c) => c.attempts))}::int[]))
          order by id
          for update
        )
        update transactions t
        set lease_expires_at = now() + make_interval(secs => ${leaseSeconds})
        from held where t.id = held.id
        returning t.id, t.attempts`,
  );
  return new Set(rows.map((r) => leaseKey(r.id, Number(r.attempts))));
}

/** A claim's key in the heartbeat's answer: its transaction and the claim's `attempts`. */
export const leaseKey = (id: string, attempts: number) => `${id}:${attempts}`;
