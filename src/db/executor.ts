import type { ExtractTablesWithRelations } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from "drizzle-orm/pg-core";
import { drizzle } from "drizzle-orm/postgres-js";
import type { Sql, TransactionSql } from "postgres";
import type * as schema from "./schema/index.ts";

export type Schema = typeof schema;
export type Database = PgDatabase<PgQueryResultHKT, Schema>;

/**
 * An open transaction. On PostgreSQL it is a Drizzle database over the transaction's reserved postgres.js
 * connection (so raw statements can be prepared on that connection), without the relational query API;
 * on the embedded engine it is Drizzle's own transaction.
 */
export type Transaction =
  | PgDatabase<PgQueryResultHKT>
  | PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;

/** A database or an open transaction: services compose inside one transaction through it. */
export type Executor = Database | Transaction;

/** The postgres.js connection an executor runs on: the pool, or a transaction's reserved connection. */
export type Connection = Sql | TransactionSql;

const connections = new WeakMap<Executor, Connection>();

/** Records which postgres.js connection `executor` runs on. */
export function bindConnection(executor: Executor, connection: Connection): void {
  connections.set(executor, connection);
}

/** The postgres.js connection under `executor`; undefined on the embedded engine. */
export function connectionOf(executor: Executor): Connection | undefined {
  return connections.get(executor);
}

/**
 * A Drizzle database over a transaction's connection. Drizzle reads its type parsers from the client's
 * `options`, which postgres.js sets on the pool only; the pool's are the transaction's too.
 */
export function transactionDatabase(pool: Sql, connection: TransactionSql): Transaction {
  const tx = drizzle(Object.assign(connection, { options: pool.options }) as unknown as Sql);
  bindConnection(tx, connection);
  return tx;
}
