import type { Sql, TransactionSql } from "postgres";
import { bindConnection, connectionOf, type Executor, transactionDatabase } from "./executor.ts";

export type { Executor } from "./executor.ts";

const pools = new WeakMap<Executor, Sql>();

/** Records the pool a PostgreSQL database runs on (done once, when it is opened). */
export function bindPool(db: Executor, pool: Sql): void {
  bindConnection(db, pool);
  pools.set(db, pool);
}

/**
 * Runs `fn` in a transaction (a savepoint when `executor` is already a transaction). On PostgreSQL the
 * transaction is postgres.js's own on a reserved connection, so every statement of `fn`, Drizzle's and
 * raw prepared ones alike, runs on that connection.
 */
export async function withTransaction<T>(executor: Executor, fn: (tx: Executor) => Promise<T>): Promise<T> {
  const connection = connectionOf(executor);
  const pool = pools.get(executor);
  if (connection && pool) {
    const run = (inner: TransactionSql) => {
      const tx = transactionDatabase(pool, inner);
      pools.set(tx, pool);
      return fn(tx);
    };
    const result = "savepoint" in connection ? connection.savepoint(run) : connection.begin(run);
    return (await result) as T;
  }
  return executor.transaction((tx) => fn(tx));
}
