import { type SQL, sql } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import type { KeysetPosition } from "../lib/cursor.ts";

/** Rows strictly after `position` in `(created_at desc, id desc)` order; served by the listing indexes. */
export function afterPosition(createdAt: PgColumn, id: PgColumn, position: KeysetPosition): SQL {
  return sql`(${createdAt}, ${id}) < (${position.createdAt.toISOString()}::timestamptz, ${position.id}::uuid)`;
}

/**
 * `(created_at desc, id desc)` spelled as the listing indexes are built (`desc nulls last`):
 * plain `desc` means `nulls first` in PostgreSQL, which would make it sort instead of scanning the index.
 */
export function newestFirst(createdAt: PgColumn, id: PgColumn): SQL[] {
  return [sql`${createdAt} desc nulls last`, sql`${id} desc nulls last`];
}
