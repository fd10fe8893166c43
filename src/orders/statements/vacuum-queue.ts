import { sql } from "drizzle-orm";
import { statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";

export const vacuumQueueStatementName = "orders.vacuum_queue";

/**
 * Vacuums the work queue (`transaction_queue`): every order leaves two or three dead entries in its index
 * (its claim moves it, its completion deletes it), which each claim would otherwise walk until a vacuum
 * removes them; autovacuum looks at a table once a minute at best (`autovacuum_naptime`), and not at all
 * where it is off. The table holds only the backlog, so this takes a few ms. SKIP_LOCKED: when another
 * worker is vacuuming it already, this one does nothing.
 */
export async function vacuumQueue(db: Executor): Promise<void> {
  await db.execute(sql`${statementLabel(vacuumQueueStatementName)}vacuum (skip_locked) transaction_queue`);
}
