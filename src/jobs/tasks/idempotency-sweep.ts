import type { Executor } from "../../db/transaction.ts";
import { deleteExpiredIdempotencyRecords } from "../../idempotency/protocol.ts";
import type { Task } from "../../lib/job-queue.ts";

/** Idempotency records past their lifetime, deleted in the background at start and hourly. */
export function idempotencySweepTask(deps: { db: Executor }): Task {
  return { name: "idempotency sweep", everyMs: 3600_000, run: () => deleteExpiredIdempotencyRecords(deps.db) };
}
