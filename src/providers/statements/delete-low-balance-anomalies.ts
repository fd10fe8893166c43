import { type SQL, sql } from "drizzle-orm";
import { statementLabel } from "../../db/rows.ts";
import type { RetentionStatement } from "../../retention/delete-batch.ts";

export const deleteLowBalanceAnomaliesStatementName = "providers.delete_low_balance_anomalies";

/**
 * Retention: the oldest low-float anomalies raised before the cutoff (a low float is a notice of its moment; double
 * deliveries have no resolved state and are kept). The listing index (`created_at desc`, nulls last) read
 * backwards is "oldest first" with nulls first: ordered so, it serves the delete (the column is never null).
 */
export const deleteLowBalanceAnomalies: RetentionStatement = {
  table: "provider_anomalies",
  build: (cutoff: SQL, limit: number) => sql`${statementLabel(deleteLowBalanceAnomaliesStatementName)}
      with doomed as (
        select id from provider_anomalies where kind = 'low_balance' and created_at < ${cutoff}
        order by created_at nulls first limit ${limit} for update skip locked),
      gone as (delete from provider_anomalies x using doomed where x.id = doomed.id returning 1)
      select count(*)::int as main from gone`,
};
