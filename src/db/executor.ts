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

/** Where an executor runs on PostgreSQL: its postgres.js connection (the pool, or a transaction's), and the pool. */
export interface Binding {
  connection: Sql | TransactionSql;
  pool: Sql;
  /** Raw statements may be named prepared statements (not behind a transaction pooler). */
  prepare: boolean;
  /** Where transactions begin: the pool itself, or behind a transaction pooler a pool of their own (see openPostgres). */
  transactions: Sql;
}

const bindings = new WeakMap<Executor, Binding>();

/** Records that a PostgreSQL database runs on `pool` (done once, when it is opened). */
export function bindPool(db: Executor, pool: Sql, options: { prepare?: boolean; transactions?: Sql } = {}): void {
  bindings.set(db, { connection: pool, pool, prepare: options.prepare ?? true, transactions: options.transactions ?? pool });
}

/** Where `executor` runs on PostgreSQL; undefined on the embedded engine. */
export function bindingOf(executor: Executor): Binding | undefined {
  return bindings.get(executor);
}

/**
 * A Drizzle database over a transaction's reserved connection, bound to it. Drizzle reads its type
 * parsers from the client's `options`, which postgres.js sets on the pool only; the pool's are the
 * transaction's too.
 */
export function transactionDatabase(binding: Binding, connection: TransactionSql): Transaction {
  const tx = drizzle(Object.assign(connection, { options: binding.pool.options }) as unknown as Sql);
  bindings.set(tx, { ...binding, connection });
  return tx;
}
