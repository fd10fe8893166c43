import { and, eq, inArray, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { queryRows } from "../db/rows.ts";
import { type BatchRejection, transactions, vendBatches } from "../db/schema/index.ts";
import { type Executor, withTransaction } from "../db/transaction.ts";
import { finalStatuses } from "../lib/shared/statuses.ts";
import { enqueueAccountEvent } from "../webhooks/statements/record-account-event.ts";

export type VendBatch = components["schemas"]["VendBatch"];
export type VendBatchCounts = components["schemas"]["VendBatchCounts"];
export type VendBatchRow = typeof vendBatches.$inferSelect;

const openStatuses = ["queued", "processing", "pending", "successful", "failed"] as const;

/** The counts of a batch: its transactions by status, then its rejections by kind (402 refused, 400 invalid). */
export function countsOf(byStatus: Record<string, number>, rejections: readonly BatchRejection[]): VendBatchCounts {
  const counts: VendBatchCounts = { queued: 0, processing: 0, pending: 0, successful: 0, failed: 0, refused: 0, invalid: 0 };
  for (const status of openStatuses) counts[status] = byStatus[status] ?? 0;
  for (const rejection of rejections) {
    if (rejection.status === 402) counts.refused += 1;
    else counts.invalid += 1;
  }
  return counts;
}

export function presentVendBatch(row: VendBatchRow, counts: VendBatchCounts): VendBatch {
  return {
    id: row.id,
    mode: row.mode,
    order_count: row.orderCount,
    counts,
    rejections: row.rejections.map((r) => ({
      index: r.index,
      client_reference: r.client_reference,
      status: r.status === 402 ? 402 : 400,
      error: r.error as VendBatch["rejections"][number]["error"],
    })),
    created_at: row.createdAt.toISOString(),
    completed_at: row.completedAt?.toISOString() ?? null,
  };
}

/** The batch as it stands: its row and its transactions counted by status (one indexed scan of the batch). */
export async function readVendBatch(db: Executor, row: VendBatchRow): Promise<VendBatch> {
  const rows = await db
    .select({ status: transactions.status, count: sql<number>`count(*)::int` })
    .from(transactions)
    .where(eq(transactions.batchId, row.id))
    .groupBy(transactions.status);
  const byStatus = Object.fromEntries(rows.map((r) => [r.status, Number(r.count)]));
  return presentVendBatch(row, countsOf(byStatus, row.rejections));
}

/**
 * Several batches as they stand, in the order given: their transactions counted by batch and status in ONE
 * query (the batch index), however many batches.
 */
export async function readVendBatches(db: Executor, batchRows: readonly VendBatchRow[]): Promise<VendBatch[]> {
  if (batchRows.length === 0) return [];
  const rows = await db
    .select({ batchId: transactions.batchId, status: transactions.status, count: sql<number>`count(*)::int` })
    .from(transactions)
    .where(
      inArray(
        transactions.batchId,
        batchRows.map((row) => row.id),
      ),
    )
    .groupBy(transactions.batchId, transactions.status);
  const byBatch = new Map<string, Record<string, number>>();
  for (const r of rows) {
    if (!r.batchId) continue;
    const byStatus = byBatch.get(r.batchId) ?? {};
    byStatus[r.status] = Number(r.count);
    byBatch.set(r.batchId, byStatus);
  }
  return batchRows.map((row) => presentVendBatch(row, countsOf(byBatch.get(row.id) ?? {}, row.rejections)));
}

const finalList = sql.raw(finalStatuses.map((s) => `'${s}'`).join(", "));

/**
 * Marks each of these batches complete when every one of its orders is final, with its `batch.completed`
 * event, once: the guarded update (`completed_at is null`, no open order) runs in the event's database
 * transaction, so of two callers only one sets it. Called after a completion has COMMITTED: of two orders
 * of one batch completed at once, the later commit's check sees both final, so the last order is never
 * missed (a process that dies in between leaves it to `completeFinishedBatches`).
 */
export async function completeBatchesOf(db: Executor, batchIds: Iterable<string | null | undefined>): Promise<number> {
  let completed = 0;
  for (const id of new Set([...batchIds].filter((b): b is string => typeof b === "string"))) {
    const [open] = await queryRows<{ open: boolean }>(
      db,
      sql`select exists (select 1 from transactions where batch_id = ${id}::uuid and status not in (${finalList})) as open`,
    );
    if (open?.open) continue;
    if (await completeBatch(db, id)) completed += 1;
  }
  return completed;
}

/** The guarded completion of one batch and its event; false when it was not due (or already done). */
async function completeBatch(db: Executor, id: string): Promise<boolean> {
  return withTransaction(db, async (tx) => {
    const [row] = await tx
      .update(vendBatches)
      .set({ completedAt: sql`date_trunc('milliseconds', now())` })
      .where(
        and(
          eq(vendBatches.id, id),
          sql`${vendBatches.completedAt} is null`,
          sql`not exists (select 1 from transactions t where t.batch_id = ${vendBatches.id} and t.status not in (${finalList}))`,
        ),
      )
      .returning();
    if (!row) return false;
    await emitBatchCompleted(tx, await readVendBatch(tx, row), row.accountId);
    return true;
  });
}

/** Records `batch.completed` for the batch and schedules its deliveries, on the caller's transaction. */
export async function emitBatchCompleted(tx: Executor, batch: VendBatch, accountId: string): Promise<void> {
  await enqueueAccountEvent(tx, { accountId, mode: batch.mode, type: "batch.completed", data: batch });
}

/**
 * Completes the batches whose orders are all final but that are still open: the sweep behind
 * `completeBatchesOf`, for a completion whose process stopped before its check. Looks at batches
 * created within the last `withinHours`.
 */
export async function completeFinishedBatches(db: Executor, withinHours = 72): Promise<number> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`select b.id from vend_batches b
        where b.completed_at is null and b.created_at > now() - make_interval(hours => ${withinHours})
          and not exists (select 1 from transactions t where t.batch_id = b.id and t.status not in (${finalList}))
        limit 100`,
  );
  return completeBatchesOf(
    db,
    rows.map((r) => r.id),
  );
}
