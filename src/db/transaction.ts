import type { TransactionSql } from "postgres";
import { bindingOf, type Executor, transactionDatabase } from "./executor.ts";

export type { Executor } from "./executor.ts";

/**
 * A COMMIT that PostgreSQL answered ROLLBACK: a statement failed inside the transaction and nothing was
 * saved. Seen behind PgBouncer, where a statement of another request, retried by the driver on the
 * reserved connection, failed inside this transaction. A bug to investigate (500), never a success.
 */
export class TransactionRolledBackError extends Error {
  readonly code = "TRANSACTION_ROLLED_BACK";
  constructor(answer: string) {
    super(`the transaction did not commit: PostgreSQL answered the COMMIT with ${answer}`);
  }
}

/**
 * Runs `fn` in a transaction (a savepoint when `executor` is already a transaction). On PostgreSQL the
 * transaction is postgres.js's own on a reserved connection, so every statement of `fn`, Drizzle's and
 * raw prepared ones alike, runs on that connection.
 *
 * The transaction commits only when the COMMIT says so: postgres.js takes any answer to its COMMIT as
 * success, so the COMMIT is sent here and its answer read (postgres.js's own then finds no transaction
 * and only warns).
 */
export async function withTransaction<T>(executor: Executor, fn: (tx: Executor) => Promise<T>): Promise<T> {
  const binding = bindingOf(executor);
  if (binding) {
    const { connection } = binding;
    if ("savepoint" in connection) return (await connection.savepoint((inner) => fn(transactionDatabase(binding, inner)))) as T;
    return (await connection.begin(async (inner: TransactionSql) => {
      const result = await fn(transactionDatabase(binding, inner));
      const committed = await inner.unsafe("commit");
      if (committed.command !== "COMMIT") throw new TransactionRolledBackError(committed.command);
      return result;
    })) as T;
  }
  // The embedded engine's transaction already fails when its COMMIT is answered ROLLBACK (tested).
  return executor.transaction((tx) => fn(tx));
}
