import type { Executor } from "../../db/transaction.ts";
import type { Task } from "../../lib/job-queue.ts";
import { completeFinishedBatches } from "../../orders/batch-completion.ts";

/**
 * Completes the bulk orders whose last order finished in a process that stopped before completing them
 * (`completeFinishedBatches`), every minute.
 */
export function batchCompletionSweepTask(deps: { db: Executor }): Task {
  return { name: "batch completion sweep", everyMs: 60_000, run: () => completeFinishedBatches(deps.db) };
}
