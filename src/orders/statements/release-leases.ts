import { sql } from "drizzle-orm";
import { cte } from "../../db/cte.ts";
import { statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";
import { requeue } from "./requeue.ts";

export const releaseLeasesStatementName = "orders.release_leases";

const released = cte("released", ["id", "created_at", "next_attempt_at"]);

/** Gives back leases this worker still holds (graceful shutdown): others may take them at once. */
export async function releaseLeases(db: Executor, workerId: string): Promise<void> {
  await db.execute(
    sql`${statementLabel(releaseLeasesStatementName)}with released as (
          update transactions t set lease_expires_at = now()
          from transaction_queue q
          where t.id = q.transaction_id and t.created_at = q.created_at
            and t.lease_owner = ${workerId} and t.status in ('processing', 'pending')
          returning t.id, t.created_at, greatest(t.next_attempt_at, now()) as next_attempt_at
        ), ${requeue(released)}
        select count(*) from released`,
  );
}
