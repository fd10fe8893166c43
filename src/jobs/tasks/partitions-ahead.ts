import type { Database } from "../../db/client.ts";
import { createPartitionsAhead } from "../../db/partitions.ts";
import type { Task } from "../../lib/job-queue.ts";

/** On partitioned history, next months' partitions, created ahead every hour (nothing to do otherwise). */
export function partitionsAheadTask(deps: { db: Database }): Task {
  return { name: "partitions ahead", everyMs: 3600_000, run: () => createPartitionsAhead(deps.db) };
}
