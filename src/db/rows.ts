import { type Column, fillPlaceholders, getTableColumns, type SQL, sql, type Table } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { bindingOf, type Executor } from "./executor.ts";

const dialect = new PgDialect();

/**
 * A statement's name as the first words of its text (`/* orders.complete *\/`), so it is found by name in
 * `pg_stat_statements`, `pg_prepared_statements` and slow-query logs.
 */
export const statementLabel = (name: string): SQL => sql.raw(`/* ${name} */ `);

/**
 * A condition true of every row (`position` is never negative) that makes the planner expect ONE row: a range on a
 * column it has no statistics for is estimated at 0.5% of the rows, and a JSON input is guessed at 100. A
 * prepared statement keeps one generic plan, made on the sizes its tables had then: planned for 100 orders
 * over young tables it hash-joins over seq scans, and goes on reading those tables whole as they grow (no
 * new plan comes where autovacuum is off). Planned for one, each step is a lookup by key at every size.
 */
export const plannedForOne = (position: SQL): SQL => sql`${position} between 0 and 2147483647`;

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
    return runOnBinding<T>(binding, text, params);
  }
  const result = (await executor.execute(query)) as unknown as { rows?: T[] } | T[];
  return Array.isArray(result) ? result : (result.rows ?? []);
}

/** Raw text and values on a PostgreSQL executor's connection: a named prepared statement unless behind a transaction pooler. */
async function runOnBinding<T>(
  binding: NonNullable<ReturnType<typeof bindingOf>>,
  text: string,
  params: unknown[],
): Promise<T[]> {
  return (await binding.connection.unsafe(text, params as never[], { prepare: binding.prepare })) as unknown as T[];
}

/** A `json_agg` column as the engine hands it over: already parsed (postgres.js), or as text (the embedded engine). */
export function jsonRows<T>(value: string | T[] | null | undefined): T[] {
  return typeof value === "string" ? (JSON.parse(value) as T[]) : (value ?? []);
}

const tableColumns = new WeakMap<Table, [string, Column][]>();

/**
 * A row of `table` as raw SQL returns it (`returning t.*`: column names, driver values) in the shape Drizzle's
 * own select gives (property keys, mapped values), so a raw statement can hand back whole rows in its one
 * round trip.
 */
export function decodeRow<T extends Table>(table: T, raw: Record<string, unknown>): T["$inferSelect"] {
  let columns = tableColumns.get(table);
  if (!columns) {
    columns = Object.entries(getTableColumns(table));
    tableColumns.set(table, columns);
  }
  const row: Record<string, unknown> = {};
  for (const [key, column] of columns) {
    const value = raw[column.name];
    row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return row as T["$inferSelect"];
}

/**
 * A hot-path raw statement whose text is built ONCE: `build` writes it with `sql.placeholder(name)` for each
 * value, and each run only binds `values` to it, so no query building happens per call. On PostgreSQL it
 * runs as `queryRows` does (a named prepared statement on the executor's connection); the embedded engine
 * is given the same text and values, its text cut at each `$n` Drizzle wrote: so the text itself must hold
 * no `$` followed by digits (no dollar quoting, no such literal).
 */
export function preparedStatement<Values extends Record<string, unknown>, Row>(
  build: () => SQL,
): (executor: Executor, values: Values) => Promise<Row[]> {
  let built: { sql: string; params: unknown[]; parts: string[] } | undefined;
  return async (executor, values) => {
    if (!built) {
      const query = dialect.sqlToQuery(build());
      built = { ...query, parts: query.sql.split(/\$\d+/) };
    }
    const params = fillPlaceholders(built.params, values);
    const binding = bindingOf(executor);
    if (binding) return runOnBinding<Row>(binding, built.sql, params);
    // Drizzle numbers the placeholders in order of appearance, so the text splits into one part more than there are values.
    const { parts } = built;
    const chunks = parts.flatMap((part, n) => (n < params.length ? [sql.raw(part), sql.param(params[n])] : [sql.raw(part)]));
    return queryRows<Row>(executor, sql.join(chunks, sql.raw("")));
  };
}
