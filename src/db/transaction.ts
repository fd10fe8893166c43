import type { TransactionSql } from "postgres";
import { bindingOf, type Executor, transactionDatabase } from "./executor.ts";

export type { Executor } from "./executor.ts";

/**
 * Runs `fn` in a transaction (a savepoint when `executor` is already a transaction). On PostgreSQL the
 * transaction is postgres.js's own on a reserved connection, so every statement of `fn`, Drizzle's and
 * raw prepared ones alike, runs on that connection.
 */
export async function withTransaction<T>(executor: Executor, fn: (tx: Executor) => Promise<T>): Promise<T> {
  const binding = bindingOf(executor);
  if (binding) {
    const { connection, pool } = binding;
    const run = (inner: TransactionSql) => fn(transactionDatabase(pool, inner));
    const result = "savepoint" in connection ? connection.savepoint(run) : connection.begin(run);
    return (await result) as T;
  }
  return executor.transaction((tx) => fn(tx));
}
