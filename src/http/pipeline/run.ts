import { type Executor, withTransaction } from "../../db/transaction.ts";
import type { Logger } from "../../logger.ts";

/**
 * Defers a step until the operation's change has committed: what lives outside the database (the
 * in-memory key registry, caches, counters) must never reflect a change that rolled back. A step that writes
 * again once the change is in force (a revocation's recorded instant) does so on the database it is given.
 */
export type AfterCommit = (step: (db: Executor) => unknown) => void;

export interface RunDeps {
  db: Executor;
  logger: Logger;
}

/** What the handler runs on: the database, or the change's transaction; and where it defers its side effects. */
export interface RunContext {
  db: Executor;
  afterCommit: AfterCommit;
}

/**
 * Runs the handler. A change (`commit` given: what must commit with it, the audit entry) runs in ONE
 * transaction with it, and a failure of either rolls both back; other operations run on the database.
 * The deferred steps run, in order, once the work has committed, before the answer; a step that fails
 * is logged (the change stands). None runs when the handler or the commit fails.
 */
export async function run<Result>(
  deps: RunDeps,
  commit: ((tx: Executor, result: Result) => Promise<void>) | null,
  handler: (context: RunContext) => Promise<Result>,
  /** A first part of the handler that runs on the database before the transaction opens; it answers the rest. */
  prepare?: (context: RunContext) => Promise<(context: RunContext) => Promise<Result>>,
): Promise<Result> {
  const deferred: ((db: Executor) => unknown)[] = [];
  const afterCommit: AfterCommit = (step) => {
    deferred.push(step);
  };
  const change = prepare ? await prepare({ db: deps.db, afterCommit }) : handler;
  const result = commit
    ? await withTransaction(deps.db, async (tx) => {
        const done = await change({ db: tx, afterCommit });
        await commit(tx, done);
        return done;
      })
    : await change({ db: deps.db, afterCommit });
  for (const step of deferred) {
    try {
      await step(deps.db);
    } catch (error) {
      deps.logger.error({ err: error instanceof Error ? error.message : String(error) }, "a step after the commit failed");
    }
  }
  return result;
}
