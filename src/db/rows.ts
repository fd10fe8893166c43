import { getTableColumns, type SQL, sql, type Table } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { bindingOf, type Executor } from "./executor.ts";

const dialect = new PgDialect();

/**
 * A statement's name as the first words of its text (`/* orders.complete *\/`), so it is found by name in
 * `pg_stat_statements`, `pg_prepared_statements` and slow-query logs.
 */
export const statementLabel = (name: string): SQL => sql.raw(`/* ${name} */ `);

/**
 * Runs raw SQL and returns its rows, whichever engine is underneath.
 *
 * On PostgreSQL the statement goes to the executor's postgres.js connection as a named prepared
 * statement: Drizzle sends raw SQL unprepared, which makes PostgreSQL parse and plan the hot-path
 * statements (the vend accept, the idempotency claim) on every request. Behind a transaction pooler it
 * is sent unnamed (a named one would be unknown on the next server connection). The embedded engine runs
 * it through Drizzle.
 */
export async function queryRows<T>(executor: Executor, query: SQL): Promise<T[]> {
  const binding = bindingOf(executor);
  if (binding) {
    const { sql: text, params } = dialect.sqlToQuery(query);
    return (await binding.connection.unsafe(text, params as never[], { prepare: binding.prepare })) as unknown as T[];
  }
  const result = (await executor.execute(query)) as unknown as { rows?: T[] } | T[];
  return Array.isArray(result) ? result : (result.rows ?? []);
}

/**
 * A row of `table` as raw SQL returns it (`returning t.*`: column names, driver values) in the shape Drizzle's
 * own select gives (property keys, mapped values), so a raw statement can hand back whole rows in its one
 * round trip.
 */
export function decodeRow<T extends Table>(table: T, raw: Record<string, unknown>): T["$inferSelect"] {
  const row: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(getTableColumns(table))) {
    const value = raw[column.name];
    row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return row as T["$inferSelect"];
}
