import { type SQL, sql } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import type { KeysetPosition } from "../lib/cursor.ts";

/** Rows strictly after `position` in `(created_at desc, id desc)` order; served by the listing indexes. */
export function afterPosition(createdAt: PgColumn, id: PgColumn, position: KeysetPosition): SQL {
  return sql`(${createdAt}, ${id}) < (${position.createdAt.toISOString()}::timestamptz, ${position.id}::uuid)`;
}
