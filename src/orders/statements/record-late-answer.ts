import { sql } from "drizzle-orm";
import { queryRows, statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";

export const recordLateAnswerStatementName = "orders.record_late_answer";

/**
 * Records on its attempt what a provider the order has moved away from reported late (by callback): its
 * final status, its reference (when it gave one) and its message. The order itself is not moved here.
 */
export async function recordLateAnswer(
  db: Executor,
  transactionId: string,
  provider: string,
  answer: { status: "successful" | "failed"; providerReference?: string; message?: string },
): Promise<void> {
  await queryRows(
    db,
    sql`${statementLabel(recordLateAnswerStatementName)}update provider_attempts
        set status = ${answer.status}, provider_reference = coalesce(${answer.providerReference ?? null}, provider_reference),
            answered_at = now(), message = ${answer.message ?? null}
        where transaction_id = ${transactionId}::uuid and provider = ${provider}`,
  );
}
