import { and, asc, eq, getTableColumns, inArray, isNull, lt, type SQL, sql } from "drizzle-orm";
import type { Config } from "../../config.ts";
import { transactions } from "../../db/schema/index.ts";
import type { Executor } from "../../db/transaction.ts";
import type { TransactionRow } from "../view.ts";

/**
 * When an order accepted before this instant and still pending is stuck (the admin list's `stuck=true` too):
 * STUCK_AFTER_MINUTES before the database's now, the clock that stamped `created_at`, so every process
 * draws the same line whatever its own clock says.
 */
export const stuckCutoff = (config: Pick<Config, "operations">): SQL =>
  sql`now() - make_interval(mins => ${config.operations.stuckAfterMinutes}::int)`;

/** An order raised as stuck, with its age then in whole minutes (on the database's clock). */
export interface RaisedOrder {
  row: TransactionRow;
  ageMinutes: number;
}

/** Orders one statement raises at most; a full batch is followed at once by the next. */
export const stuckBatch = 100;

/**
 * Marks pending orders accepted before the stuck cutoff as raised, oldest first, in one guarded statement
 * (`stuck_raised_at is null`, rows other processes hold skipped): each order is raised once, however many
 * worker processes run this. Returns the orders it raised.
 */
export async function raiseStuck(db: Executor, config: Pick<Config, "operations">): Promise<RaisedOrder[]> {
  const cutoff = stuckCutoff(config);
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
  const raised = await db
    .update(transactions)
    .set({ stuckRaisedAt: sql`now()` })
    .where(and(inArray(transactions.id, due), eq(transactions.status, "pending"), isNull(transactions.stuckRaisedAt)))
    .returning({
      ...getTableColumns(transactions),
      ageMinutes: sql<number>`floor(extract(epoch from now() - ${transactions.createdAt}) / 60)::int`.mapWith(Number),
    });
  return raised.map(({ ageMinutes, ...row }) => ({ row, ageMinutes }));
}
