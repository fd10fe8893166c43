import type { SQL } from "drizzle-orm";
import type { Executor } from "./transaction.ts";

interface PostgresJsInternals {
  dialect?: { sqlToQuery(query: SQL): { sql: string; params: unknown[] } };
  session?: { client?: { unsafe?: (text: string, params: unknown[], options: { prepare: boolean }) => Promise<unknown[]> } };
}

/**
 * Runs raw SQL and returns its rows, whichever driver is underneath (postgres-js or PGlite).
 *
 * On PostgreSQL the statement is sent as a named prepared statement: Drizzle sends raw SQL
 * unprepared, which makes PostgreSQL parse and plan the hot-path statements (the vend accept,
 * the idempotency claim) on every request. This reaches into Drizzle's session (the version is
 * pinned) and falls back to `execute` anywhere that shape is not there (PGlite).
 */
export async function queryRows<T>(db: Executor, query: SQL): Promise<T[]> {
  const internals = db as unknown as PostgresJsInternals;
  const unsafe = internals.session?.client?.unsafe;
  if (internals.dialect && typeof unsafe === "function") {
    const { sql, params } = internals.dialect.sqlToQuery(query);
    return (await unsafe.call(internals.session?.client, sql, params, { prepare: true })) as T[];
  }
  const result = (await db.execute(query)) as unknown as { rows?: T[] } | T[];
  return Array.isArray(result) ? result : (result.rows ?? []);
}
