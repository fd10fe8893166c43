import { sql } from "drizzle-orm";
import { queryRows } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";
import type { AttemptAnswer } from "../states.ts";
import type { TransactionRow } from "../view.ts";
import type { LeaseHold } from "./claim-due.ts";

/** The providers an order has been sent to (or was about to be), in order. */
export async function attemptedProviders(db: Executor, transactionId: string): Promise<string[]> {
  const rows = await queryRows<{ provider: string }>(
    db,
    sql`select provider from provider_attempts where transaction_id = ${transactionId}::uuid order by sent_at, id`,
  );
  return rows.map((r) => r.provider);
}

/** The request id an order is sent to its `n`th provider under: the reference for the first, then `<reference>-<n>`. */
export const requestIdFor = (reference: string, n: number) => (n <= 1 ? reference : `${reference}-${n}`);

/**
 * Moves a claimed order to provider `to` before it is sent there, in ONE guarded statement: the
 * transaction names `to` (and its request id, and `route` in its metadata), its send there is counted
 * (`provider_sends` starts again at 1: the re-send bound is per provider), the previous provider's
 * attempt gets its final answer (`from` is null when nothing was sent to it yet, and its attempt row is
 * re-pointed instead), and `to`'s attempt is recorded. Null when the claim is no longer this worker's:
 * the caller must not send. Returns the row as it now stands.
 */
export async function switchProvider(
  db: Executor,
  row: TransactionRow,
  claim: LeaseHold,
  to: { provider: string; requestId: string },
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
    sql`with txn as (
          update transactions
          set provider = ${to.provider}, provider_request_id = ${to.requestId === row.reference ? null : to.requestId},
              provider_sends = 1, provider_reference = null,
              metadata = metadata || jsonb_build_object('route', ${to.provider}::text),
              lease_expires_at = now() + make_interval(secs => ${leaseSeconds}), updated_at = now()
          where id = ${row.id}::uuid and lease_owner = ${claim.leaseOwner} and attempts = ${claim.attempts}
            and status in ('processing', 'pending') and provider = ${previous}
          returning id, updated_at
        ), closed as (${closePrevious}), opened as (
          insert into provider_attempts (transaction_id, provider, request_id, status)
          select id, ${to.provider}, ${to.requestId}, 'sent' from txn
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

/**
 * A new order none of whose providers may take it now (all disabled, or breakers open): back to
 * `queued`, its counted send and its unsent attempt undone, to be claimed again after `delayMs`.
 */
export async function deferUnsent(db: Executor, row: TransactionRow, claim: LeaseHold, delayMs: number): Promise<boolean> {
  const [deferred] = await queryRows<{ id: string }>(
    db,
    sql`with txn as (
          update transactions
          set status = 'queued', provider_sends = greatest(provider_sends - 1, 0), lease_owner = null, lease_expires_at = null,
              next_attempt_at = now() + make_interval(secs => ${delayMs / 1000}), updated_at = now()
          where id = ${row.id}::uuid and lease_owner = ${claim.leaseOwner} and attempts = ${claim.attempts} and status = 'processing'
          returning id
        ), unsent as (
          delete from provider_attempts where transaction_id = (select id from txn) and status = 'sent'
        )
        select id from txn`,
  );
  return deferred !== undefined;
}
