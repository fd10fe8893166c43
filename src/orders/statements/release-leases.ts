import { sql } from "drizzle-orm";
import { statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";

export const releaseLeasesStatementName = "orders.release_leases";

/** Gives back leases this worker still holds (graceful shutdown): others may take them at once. */
export async function releaseLeases(db: Executor, workerId: string): Promise<void> {
  await db.execute(
    sql`${statementLabel(releaseLeasesStatementName)}update transactions set lease_expires_at = now() where lease_owner = ${workerId} and status in ('processing', 'pending')`,
  );
}
