import { type SQL, sql } from "drizzle-orm";
import { statementLabel } from "../../db/rows.ts";
import type { RetentionStatement } from "../../retention/delete-batch.ts";

export const deleteOldAttemptsStatementName = "webhooks.delete_old_attempts";

/** Retention: the oldest attempts before the cutoff, whatever their delivery, oldest first through their retention index. */
export const deleteOldAttempts: RetentionStatement = {
  table: "webhook_attempts",
  build: (cutoff: SQL, limit: number) => sql`${statementLabel(deleteOldAttemptsStatementName)}
      with doomed as (
        select id from webhook_attempts where attempted_at < ${cutoff}
        order by attempted_at limit ${limit} for update skip locked),
      gone as (delete from webhook_attempts x using doomed where x.id = doomed.id returning 1)
      select count(*)::int as main from gone`,
};
