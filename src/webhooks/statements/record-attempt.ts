import { sql } from "drizzle-orm";
import { queryRows, statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";

export const recordAttemptStatementName = "webhooks.record_attempt";

/** One send of a claimed delivery and where it leaves the delivery. */
export interface RecordedAttempt {
  deliveryId: string;
  /** The claim's lease: the delivery moves on only while it still holds it. */
  lease: Date;
  /** The attempt's number, from 1. */
  attempt: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  status: "succeeded" | "failed" | "pending";
  /** With `pending`: the next attempt's delay in milliseconds; otherwise null (no next attempt). */
  retryInMs: number | null;
}

/**
 * Logs the attempt (`webhook_attempts`) and moves its delivery on (its status, attempt count, next attempt and
 * last result; its lease dropped) in one statement. The delivery moves only while the claim still holds its
 * lease (a resend, a delete or a disabling took it otherwise); the attempt is logged either way.
 */
export async function recordAttempt(db: Executor, a: RecordedAttempt): Promise<void> {
  await queryRows(
    db,
    sql`${statementLabel(recordAttemptStatementName)}with attempt as (
          insert into webhook_attempts (delivery_id, attempt, status_code, error, duration_ms)
          values (${a.deliveryId}::uuid, ${a.attempt}::int, ${a.statusCode}::int, ${a.error}::text, ${a.durationMs}::int)
        )
        update webhook_deliveries
        set status = ${a.status}, attempts = ${a.attempt}::int,
            next_attempt_at = now() + ${a.retryInMs}::float8 * interval '1 millisecond', lease_expires_at = null,
            last_status_code = ${a.statusCode}::int, last_error = ${a.error}::text, updated_at = now()
        where id = ${a.deliveryId}::uuid and status = 'pending' and lease_expires_at = ${a.lease.toISOString()}::timestamptz`,
  );
}
