import { type SQL, sql } from "drizzle-orm";
import { statementLabel } from "../../db/rows.ts";
import type { RetentionStatement } from "../../retention/delete-batch.ts";

export const deleteOldCallbacksStatementName = "callbacks.delete_old_callbacks";

/**
 * Retention: the oldest stored provider callbacks received before the cutoff. The listing index
 * (`received_at desc`, nulls last) read backwards is "oldest first" with nulls first: ordered so, it serves the
 * delete (the column is never null), where a plain order would sort the whole table.
 */
export const deleteOldCallbacks: RetentionStatement = {
  table: "provider_callbacks",
  build: (cutoff: SQL, limit: number) => sql`${statementLabel(deleteOldCallbacksStatementName)}
      with doomed as (
        select id from provider_callbacks where received_at < ${cutoff}
        order by received_at nulls first limit ${limit} for update skip locked),
      gone as (delete from provider_callbacks x using doomed where x.id = doomed.id returning 1)
      select count(*)::int as main from gone`,
};
