import type { TransactionSql } from "postgres";
import { bindingOf, type Executor, transactionDatabase } from "./executor.ts";

export type { Executor } from "./executor.ts";

/**
 * A transaction a statement failed in, unseen by its work: its COMMIT would be answered ROLLBACK, without an
 * error, and nothing saved. Seen behind PgBouncer, before statements were kept from being pipelined there
 * (see openPostgres): a statement of another request reached this transaction's server connection and failed
 * inside it. A bug to investigate (500), never a success.
 */
export class TransactionRolledBackError extends Error {
  readonly code = "TRANSACTION_ROLLED_BACK";
  constructor(cause: unknown) {
    super("the transaction cannot commit: a statement failed inside it", { cause });
  }
}

/** SQLSTATE 25P02: "current transaction is aborted, commands ignored until end of transaction block". */
const abortedTransaction = "25P02";

/**
 * Runs `fn` in a transaction (a savepoint when `executor` is already a transaction). On PostgreSQL the
 * transaction is postgres.js's own on a reserved connection, so every statement of `fn`, Drizzle's and
 * raw prepared ones alike, runs on that connection.
 *
 * postgres.js fails the transaction when one of its own statements failed, but takes any answer to its
 * COMMIT as success, so a transaction aborted by a statement it did not send would be answered ROLLBACK
 * and reported committed. One statement before the COMMIT proves the transaction is not aborted (a foreign
 * statement lands on the connection before the work's first one, so before this one). The COMMIT itself
 * cannot be sent here: postgres.js hands the connection back to the pool as soon as it sees it idle.
 */
export async function withTransaction<T>(executor: Executor, fn: (tx: Executor) => Promise<T>): Promise<T> {
  const binding = bindingOf(executor);
  if (binding) {
    const { connection } = binding;
    if ("savepoint" in connection) return (await connection.savepoint((inner) => fn(transactionDatabase(binding, inner)))) as T;
    return (await binding.transactions.begin(async (inner: TransactionSql) => {
      const result = await fn(transactionDatabase(binding, inner));
      await inner.unsafe("select 1", [], { prepare: binding.prepare }).catch((error: { code?: string }) => {
        throw error?.code === abortedTransaction ? new TransactionRolledBackError(error) : error;
      });
      return result;
    })) as T;
  }
  // The embedded engine's transaction already fails when its COMMIT is answered ROLLBACK (tested).
  return executor.transaction((tx) => fn(tx));
}
