import { sql } from "drizzle-orm";
import { queryRows, statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";
import type { AttemptAnswer } from "../states.ts";
import type { TransactionRow } from "../view.ts";
import type { LeaseHold } from "./claim-due.ts";

export const switchProviderStatementName = "orders.switch_provider";

/**
 * Moves a claimed order to provider `to` before it is sent there, in ONE guarded statement: the
 * transaction names `to` (and its request id, and `route` in its metadata), its send there is counted
 * (`provider_sends` starts again at 1: the re-send bound is per provider), the previous provider's
 * attempt gets its final answer (`from` is null when nothing was sent to it yet, and its attempt row is
 * re-pointed instead), and `to`'s attempt is recorded with its cost there (`providerCostKobo`). Null when the claim is no longer this worker's:
 * the caller must not send. Returns the row as it now stands.
 */
export async function switchProvider(
  db: Executor,
  row: TransactionRow,
  claim: LeaseHold,
  to: { provider: string; requestId: string; costKobo: number },
  from: { answer: AttemptAnswer } | null,
  leaseSeconds: number,
): Promise<TransactionRow | null> {
  const previous = row.provider;
  const closePrevious = from
    ? sql`update provider_attempts
          set status = ${from.answer.status}, message = coalesce(${from.answer.message ?? null}, message),
              answered_at = now(), answer_ms = coalesce(answer_ms, ${from.answer.answerMs ?? null}::int)
          where transaction_id = (select id from txn) and provider = ${previous}`
    : sql`delete from provider_attempts where transaction_id = (select id from txn) and provider = ${previous} and status = 'sent'`;
  const [moved] = await queryRows<{ updated_at: Date | string }>(
    db,
    sql`${statementLabel(switchProviderStatementName)}with txn as (
          update transactions
          set provider = ${to.provider}, provider_request_id = ${to.requestId === row.reference ? null : to.requestId},
              provider_sends = 1, provider_reference = null,
              metadata = metadata || jsonb_build_object('route', ${to.provider}::text),
              lease_expires_at = now() + make_interval(secs => ${leaseSeconds}), updated_at = now()
          where id = ${row.id}::uuid and lease_owner = ${claim.leaseOwner} and attempts = ${claim.attempts}
            and status in ('processing', 'pending') and provider = ${previous}
          returning id, updated_at
        ), closed as (${closePrevious}), opened as (
          insert into provider_attempts (transaction_id, provider, request_id, status, cost_kobo)
          select id, ${to.provider}, ${to.requestId}, 'sent', ${to.costKobo}::bigint from txn
        )
        select updated_at from txn`,
  );
  if (!moved) return null;
  return {
    ...row,
    provider: to.provider,
    providerRequestId: to.requestId === row.reference ? null : to.requestId,
    providerSends: 1,
    providerReference: null,
    metadata: { ...row.metadata, route: to.provider },
    updatedAt: moved.updated_at instanceof Date ? moved.updated_at : new Date(moved.updated_at),
  };
}
