import { and, eq, type SQL, sql } from "drizzle-orm";
import { decodeRow, queryRows, statementLabel } from "../../db/rows.ts";
import { requestLogs } from "../../db/schema/index.ts";
import type { Executor } from "../../db/transaction.ts";
import type { Scope } from "../../lib/scope.ts";
import type { RequestLogRow } from "../view.ts";

export const findLogStatementName = "request_logs.find";

/**
 * The record of the request with this id, with its bodies: the latest when several requests sent the same id
 * (a client may reuse one), within `scope` when given (another account's or mode's is not found), through the
 * request id's index. Null when none.
 */
export async function findLogRow(db: Executor, requestId: string, scope?: Scope): Promise<RequestLogRow | null> {
  const conditions: SQL[] = [eq(requestLogs.requestId, requestId)];
  if (scope) conditions.push(eq(requestLogs.accountId, scope.accountId), eq(requestLogs.mode, scope.mode));
  const [row] = await queryRows<Record<string, unknown>>(
    db,
    sql`${statementLabel(findLogStatementName)}select * from request_logs where ${and(...conditions)}
        order by ${requestLogs.id} desc limit 1`,
  );
  return row ? decodeRow(requestLogs, row) : null;
}
