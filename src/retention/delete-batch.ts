import { type SQL, sql } from "drizzle-orm";
import type { Executor } from "../db/executor.ts";
import { queryRows } from "../db/rows.ts";
import type { RetentionKind } from "./retention-settings.ts";

/** Rows one statement deleted, by table; `main` is the kind's own table (a full batch means there may be more). */
export interface Deleted {
  main: number;
  byTable: Record<string, number>;
}

/**
 * One kind's delete, written by the owner of its table (retention runs it, and writes no table itself). Its rows
 * are taken oldest first through an index that ends at the cutoff, and locked with SKIP LOCKED, so passes in
 * several processes take different rows.
 */
export interface RetentionStatement {
  /** The kind's own table, the one its batch is counted in. */
  table: string;
  /** The delete of at most `limit` rows older than `cutoff`; answers `main` and a count per other table it cleared. */
  build(cutoff: SQL, limit: number): SQL;
  /** The other tables it deletes from first (foreign keys), as named in the statement's answer. */
  alsoFrom?: string[];
}

/** The delete of every kind: the composition hands it to the pass (src/roles/retention-statements.ts). */
export type RetentionStatements = Record<RetentionKind, RetentionStatement>;

/** Deletes one batch of `statement`'s rows older than `days` days by the database's clock. */
export async function deleteBatch(db: Executor, statement: RetentionStatement, days: number, limit: number): Promise<Deleted> {
  const cutoff = sql`now() - make_interval(days => ${days}::int)`;
  const [row] = await queryRows<Record<string, number>>(db, statement.build(cutoff, limit));
  const main = Number(row?.main ?? 0);
  const byTable: Record<string, number> = { [statement.table]: main };
  for (const table of statement.alsoFrom ?? []) byTable[table] = (byTable[table] ?? 0) + Number(row?.[table] ?? 0);
  return { main, byTable };
}
