import { and, asc, eq, inArray, isNull, lt, sql } from "drizzle-orm";
import type { Config } from "../../config.ts";
import { transactions } from "../../db/schema/index.ts";
import type { Executor } from "../../db/transaction.ts";
import type { TransactionRow } from "../view.ts";

/** When an order accepted before this instant and still pending is stuck (the admin list's `stuck=true` too). */
export const stuckCutoff = (config: Pick<Config, "operations">, now = new Date()) =>
  new Date(now.getTime() - config.operations.stuckAfterMinutes * 60_000);

/** Orders one statement raises at most; a full batch is followed at once by the next. */
export const stuckBatch = 100;

/**
 * Marks pending orders accepted before `cutoff` as raised, oldest first, in one guarded statement
 * (`stuck_raised_at is null`, rows other processes hold skipped): each order is raised once, however many
 * worker processes run this. Returns the orders it raised.
 */
export async function raiseStuck(db: Executor, cutoff: Date): Promise<TransactionRow[]> {
  const due = db
    .select({ id: transactions.id })
    .from(transactions)
    .where(
      and(
        isNull(transactions.completedAt),
        eq(transactions.status, "pending"),
        lt(transactions.createdAt, cutoff),
        isNull(transactions.stuckRaisedAt),
      ),
    )
    .orderBy(asc(transactions.createdAt))
    .limit(stuckBatch)
    .for("update", { skipLocked: true });
  return db
    .update(transactions)
    .set({ stuckRaisedAt: sql`now()` })
    .where(and(inArray(transactions.id, due), eq(transactions.status, "pending"), isNull(transactions.stuckRaisedAt)))
    .returning();
}
