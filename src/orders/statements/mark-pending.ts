import { eq, sql } from "drizzle-orm";
import { cte } from "../../db/cte.ts";
import { decodeRow, queryRows, statementLabel } from "../../db/rows.ts";
import { transactions } from "../../db/schema/index.ts";
import type { Executor } from "../../db/transaction.ts";
import type { AttemptAnswer, LeaseGuard, TransitionResult } from "../states.ts";
import { answerAttempts, attemptAnswerColumns } from "./answer-attempt.ts";
import { requeue } from "./requeue.ts";

export const markPendingStatementName = "orders.mark_pending";

/**
 * When a pending order is re-queried next: `afterSeconds` from now (the database clock), unless that falls
 * later than `stopAfterHours` after its acceptance; then never again by a worker (`next_attempt_at` null: left
 * for operators). Null: never again.
 */
export interface NextRequery {
  afterSeconds: number;
  stopAfterHours?: number;
}

const txn = cte("txn", [...attemptAnswerColumns, "created_at", "next_attempt_at", "stopped"]);

/**
 * `processing` (or an already `pending` one) → `pending`, to be re-queried as `next` says, the provider's answer
 * recorded on its attempt, in ONE guarded statement. With a `lease`, only while that claim still holds it.
 * `stopped`: the re-queries stopped here (the order is left for operators); `ageHours`: whole hours since its
 * acceptance, on the database's clock (the one that stamped it), when it moved.
 */
export async function markPending(
  db: Executor,
  id: string,
  next: NextRequery | null,
  providerReference?: string,
  lease?: LeaseGuard,
  attempt: AttemptAnswer = { status: "pending" },
): Promise<TransitionResult & { stopped: boolean; ageHours: number | null }> {
  const [changed] = await queryRows<Record<string, unknown> & { stopped: boolean; age_hours: number | string }>(
    db,
    sql`${statementLabel(markPendingStatementName)}with ${txn.name} as (
          update transactions
          set status = 'pending', updated_at = now(),
              next_attempt_at = case
                when ${next?.afterSeconds ?? null}::float8 is null then null
                when ${next?.stopAfterHours ?? null}::float8 is not null
                 and now() + make_interval(secs => ${next?.afterSeconds ?? null}::float8)
                     > created_at + make_interval(secs => ${(next?.stopAfterHours ?? 0) * 3600}::float8) then null
                else now() + make_interval(secs => ${next?.afterSeconds ?? null}::float8) end,
              lease_owner = null, lease_expires_at = null,
              provider_reference = coalesce(${providerReference ?? null}, provider_reference)
          where id = ${id}::uuid and status in ('processing', 'pending')
            and (${lease?.leaseOwner ?? null}::text is null or (lease_owner = ${lease?.leaseOwner ?? null} and attempts = ${lease?.attempts ?? null}::int))
          returning *, ${attempt.status}::text as answer_status, ${attempt.message ?? null}::text as answer_message,
                    ${attempt.answerMs ?? null}::int as answer_ms, ${providerReference ?? null}::text as answer_reference,
                    ${attempt.provider ?? null}::text as answer_provider, next_attempt_at is null as stopped,
                    floor(extract(epoch from now() - created_at) / 3600)::int as age_hours
        ), ${answerAttempts(txn)}, ${requeue(txn)}
        select * from ${txn.name}`,
  );
  if (changed) {
    const row = decodeRow(transactions, changed);
    return { row, changed: true, stopped: Boolean(changed.stopped), ageHours: Number(changed.age_hours) };
  }
  const [row] = await db.select().from(transactions).where(eq(transactions.id, id));
  if (!row) throw new Error(`transaction ${id} not found`);
  return { row, changed: false, stopped: false, ageHours: null };
}
