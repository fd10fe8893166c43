import type { Database } from "./client.ts";

/** A database or an open transaction: services compose inside one transaction through it. */
export type Executor = Database;

/** Runs `fn` in a transaction (a savepoint when `executor` is already a transaction). */
export function withTransaction<T>(executor: Executor, fn: (tx: Executor) => Promise<T>): Promise<T> {
  return executor.transaction((tx) => fn(tx as unknown as Executor));
}
