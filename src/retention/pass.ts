import type { Executor } from "../db/executor.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics/metrics.ts";
import { deleteBatch, type RetentionStatements } from "./delete-batch.ts";
import { type RetentionKind, type RetentionSettings, retentionKinds } from "./retention-settings.ts";

export interface RetentionDeps {
  db: Executor;
  config: { retention: RetentionSettings };
  /** Read at each log line, so a logger swapped on this object is used from then on. */
  logger: Logger;
  metrics?: Pick<Metrics, "retentionDeleted">;
}

/** What one pass deleted, by table, and whether it stopped at its time bound with rows left. */
export interface RetentionPass {
  deleted: Record<string, number>;
  total: number;
  statements: number;
  /** The longest single statement, in milliseconds. */
  longestMs: number;
  unfinished: boolean;
}

/** How often every worker process runs a pass. */
export const retentionEveryMs = 10 * 60_000;

/**
 * One retention pass: for each kind whose setting is not 0, batches of at most RETENTION_BATCH_ROWS rows,
 * one kind after the other in turn (attempts before the deliveries they belong to, deliveries before their
 * events), again while a kind's last batch was full, until none is or RETENTION_PASS_SECONDS have gone (no
 * statement is started after that; the next pass goes on). Each statement commits on its own and skips rows
 * another process holds, so passes in several processes share the work. `statements` are each kind's delete,
 * written by the owner of its table.
 */
export async function runRetentionPass(
  deps: RetentionDeps,
  statements: RetentionStatements,
  now = () => performance.now(),
): Promise<RetentionPass> {
  const { days, batchRows, passSeconds } = deps.config.retention;
  const deadline = now() + passSeconds * 1000;
  const pass: RetentionPass = { deleted: {}, total: 0, statements: 0, longestMs: 0, unfinished: false };
  let open: RetentionKind[] = retentionKinds.filter((kind) => days[kind] > 0);
  while (open.length > 0) {
    const more: RetentionKind[] = [];
    for (const kind of open) {
      if (now() >= deadline) {
        pass.unfinished = true;
        return pass;
      }
      const started = now();
      const result = await deleteBatch(deps.db, statements[kind], days[kind], batchRows);
      pass.longestMs = Math.max(pass.longestMs, now() - started);
      pass.statements += 1;
      for (const [table, rows] of Object.entries(result.byTable)) {
        pass.deleted[table] = (pass.deleted[table] ?? 0) + rows;
        pass.total += rows;
        deps.metrics?.retentionDeleted(table, rows);
      }
      if (result.main >= batchRows) more.push(kind);
    }
    open = more;
  }
  return pass;
}
