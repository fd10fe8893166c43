import type { SQL } from "drizzle-orm";
import type { Executor } from "./transaction.ts";

/** Runs raw SQL and returns its rows, whichever driver is underneath (postgres-js or PGlite). */
export async function queryRows<T>(db: Executor, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as { rows?: T[] } | T[];
  return Array.isArray(result) ? result : (result.rows ?? []);
}
