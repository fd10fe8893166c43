import { type SQL, sql } from "drizzle-orm";
import { statementLabel } from "../../db/rows.ts";
import type { RetentionStatement } from "../../retention/delete-batch.ts";

export const deleteOldLogsStatementName = "request_logs.delete_old_logs";

/**
 * Retention: of the oldest records (the first `limit` by id, through the primary key), those that arrived before the
 * cutoff. Ids follow arrival within a flush or two, so this reads one batch's rows whatever the table's size, and
 * stops where the kept records begin (a batch with a kept record in it is not full: the pass moves on). A record
 * a moment older than a kept one with a lower id waits for the next pass.
 */
export const deleteOldLogs: RetentionStatement = {
  table: "request_logs",
  build: (cutoff: SQL, limit: number) => sql`${statementLabel(deleteOldLogsStatementName)}
      with oldest as (
        select id, created_at from request_logs order by id limit ${limit} for update skip locked),
      gone as (
        delete from request_logs x using oldest where x.id = oldest.id and oldest.created_at < ${cutoff} returning 1)
      select count(*)::int as main from gone`,
};
