import { eq, sql } from "drizzle-orm";
import type { FailureCode } from "../../generated/constants.ts";
import { queryRows } from "../db/rows.ts";
import { transactions } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { capture, release } from "../ledger/movements.ts";
import { buildTransactionEvent, emitEvent } from "../ledger/outbox.ts";
import { finalStatuses } from "../lib/shared/statuses.ts";
import { completeBatchesOf } from "./batch-completion.ts";
import { failureMetadata } from "./failures.ts";
import { presentTransaction, type Transaction, type TransactionRow } from "./view.ts";

export type Status = TransactionRow["status"];
export const isFinal = (status: Status) => (finalStatuses as readonly Status[]).includes(status);

/** Channel on which every final state change is announced (payload: the reference). */
export const finalChannel = "vend_txn_final";

/** NOTIFY payloads are limited to 8000 bytes; a larger transaction is announced by reference only. */
const maxAnnouncementBytes = 7900;

/**
 * What the final NOTIFY carries: the reference and, when it fits, the transaction as the API shows it,
 * so a woken long-poll answers without reading it again.
 */
export function finalAnnouncement(reference: string, transaction: Transaction): string {
  const full = JSON.stringify({ reference, transaction });
  return Buffer.byteLength(full) <= maxAnnouncementBytes ? full : JSON.stringify({ reference });
}

/** A final-state announcement (`vend_txn_final`): one transaction, or several of one completion. */
export interface FinalAnnouncement {
  reference: string;
  transaction?: Transaction;
}

/**
 * The transactions a final announcement names: a JSON array of announcements (a batch), one
 * announcement, or a bare reference.
 */
export function parseFinalAnnouncements(payload: string): FinalAnnouncement[] {
  const one = (value: unknown): FinalAnnouncement[] => {
    const parsed = value as { reference?: unknown; transaction?: Transaction } | null;
    return typeof parsed?.reference === "string" ? [{ reference: parsed.reference, transaction: parsed.transaction }] : [];
  };
  try {
    const parsed: unknown = JSON.parse(payload);
    if (Array.isArray(parsed)) return parsed.flatMap(one);
    const single = one(parsed);
    if (single.length > 0) return single;
  } catch {}
  return [{ reference: payload }];
}

/**
 * Groups announcements (in order) into NOTIFY payloads of JSON arrays, each within the size limit;
 * returns each announcement's group number.
 */
export function groupAnnouncements(announcements: readonly string[]): number[] {
  let group = 0;
  let bytes = 2;
  return announcements.map((announcement) => {
    const size = Buffer.byteLength(announcement) + 1;
    if (bytes > 2 && bytes + size > maxAnnouncementBytes) {
      group += 1;
      bytes = 2;
    }
    bytes += size;
    return group;
  });
}

/**
 * The transitions the service makes. Anything else changes nothing.
 * `reversed` and `refunded` are never set; `created` is not used.
 */
export const allowedFrom: Record<"processing" | "pending" | "successful" | "failed", readonly Status[]> = {
  processing: ["queued"],
  pending: ["processing", "pending"],
  successful: ["processing", "pending"],
  failed: ["processing", "pending"],
};

/** What the provider's answer says of its attempt (provider_attempts), when it is not simply the final status. */
export interface AttemptAnswer {
  status: "pending" | "unknown" | "successful" | "failed" | "not_received";
  message?: string;
  /** How long the provider took to answer the vend. */
  answerMs?: number;
  /** The provider whose attempt it is; absent: the one the order is with. */
  provider?: string;
}

export type FinalOutcome = (
  | { status: "successful"; providerReference?: string; metadata?: Record<string, string> }
  | {
      status: "failed";
      providerReference?: string;
      /** What operators read (`failure_reason`): the provider's or operator's own words. */
      reason: string;
      /** What the client reads: metadata `failure_code` and the service's `failure_message` for it. */
      failureCode: FailureCode;
      metadata?: Record<string, string>;
    }
) & {
  attempt?: AttemptAnswer;
  /** The note of the capture or release ledger entry (an operator's resolution); completed alone, not in a batch. */
  ledgerNote?: string;
};

/** The answer recorded on the attempt when the outcome does not say more. */
export const attemptAnswerOf = (outcome: FinalOutcome): AttemptAnswer =>
  outcome.attempt ?? { status: outcome.status, message: outcome.status === "failed" ? outcome.reason : undefined };

/**
 * The CTE that records the provider's answer on the attempt of the provider the order is with
 * (`txnCte` must return `id` and `provider`).
 */
export function answerAttempt(txnCte: string, answer: AttemptAnswer, providerReference: string | null | undefined) {
  return sql`answered as (
    update provider_attempts a
    set status = ${answer.status}, message = coalesce(${answer.message ?? null}, a.message),
        provider_reference = coalesce(${providerReference ?? null}, a.provider_reference),
        answered_at = now(), answer_ms = coalesce(a.answer_ms, ${answer.answerMs ?? null}::int)
    from ${sql.raw(txnCte)}
    where a.transaction_id = ${sql.raw(txnCte)}.id and a.provider = coalesce(${answer.provider ?? null}, ${sql.raw(txnCte)}.provider)
  )`;
}

/**
 * A worker's claim on a transaction (its lease owner and the claim's `attempts`). A worker's
 * transitions are guarded on it, so a worker whose lease was taken over changes nothing.
 * Provider callbacks and operator re-queries transition without one.
 */
export interface LeaseGuard {
  leaseOwner: string;
  attempts: number;
}

export const holdsLease = (row: TransactionRow, lease: LeaseGuard | undefined) =>
  !lease || (row.leaseOwner === lease.leaseOwner && row.attempts === lease.attempts);

const leaseCondition = (lease: LeaseGuard | undefined) =>
  lease ? sql` and lease_owner = ${lease.leaseOwner} and attempts = ${lease.attempts}` : sql``;

export interface TransitionResult {
  row: TransactionRow;
  /** False when the guard did not match: the transaction was already elsewhere (e.g. final). */
  changed: boolean;
}

/**
 * The row as a completion leaves it: what the event reports and the caller gets back. A failed one carries
 * `failure_code` and `failure_message` in its metadata, written by the same guarded statement as the status,
 * so the event, the final announcement and every read agree.
 */
export function finalRow(row: TransactionRow, outcome: FinalOutcome, completedAt: Date): TransactionRow {
  return {
    ...row,
    status: outcome.status,
    completedAt,
    updatedAt: completedAt,
    metadata: {
      ...row.metadata,
      ...outcome.metadata,
      ...(outcome.status === "failed" ? failureMetadata(outcome.failureCode) : {}),
    },
    providerReference: outcome.providerReference ?? row.providerReference,
    failureReason: outcome.status === "failed" ? outcome.reason : null,
    leaseOwner: null,
    leaseExpiresAt: null,
    nextAttemptAt: null,
  };
}

/**
 * After a completion has committed: completes the batches of the orders it finished when they were their
 * last open ones (see `completeBatchesOf`). The completion stands whatever happens here; a batch left open
 * by a failure is completed by the sweep (`completeFinishedBatches`).
 */
export async function completeBatchesAfter(db: Executor, batchIds: Iterable<string | null>): Promise<void> {
  try {
    await completeBatchesOf(db, batchIds);
  } catch {}
}

async function current(tx: Executor, id: string): Promise<TransactionRow> {
  const [row] = await tx.select().from(transactions).where(eq(transactions.id, id));
  if (!row) throw new Error(`transaction ${id} not found`);
  return row;
}

/**
 * Moves a transaction to `successful` or `failed` from a state that may lead there, in ONE
 * statement (so one database transaction): the guarded state change, the wallet hold captured
 * (success) or released (failure) with its ledger entry, the outbox event with a delivery per
 * webhook endpoint, and the NOTIFYs, delivered on commit. A single statement also keeps the
 * account's wallet row locked only while PostgreSQL executes it, which is what bounds throughput
 * when one busy account's transactions complete side by side.
 *
 * The final row (and so the event payload) is computed here from the row as read; the update is
 * guarded on that row's status and `updated_at`, and re-read and retried if it moved meanwhile.
 * The wallet's `held_kobo >= 0` constraint makes a missing hold fail the whole statement.
 * Repeating it, or completing a final transaction, changes nothing; with a `lease`, neither does
 * completing a transaction whose lease another worker has taken.
 */
export async function completeTransaction(
  db: Executor,
  id: string,
  outcome: FinalOutcome,
  known?: TransactionRow,
  lease?: LeaseGuard,
): Promise<TransitionResult> {
  let row = known ?? (await current(db, id));
  for (let attempt = 0; attempt < 5; attempt++) {
    if (!allowedFrom[outcome.status].includes(row.status) || !holdsLease(row, lease)) return { row, changed: false };
    const completedAt = new Date();
    const next = finalRow(row, outcome, completedAt);
    const event = buildTransactionEvent(presentTransaction(next));
    const announcement = finalAnnouncement(next.reference, event.payload.data);
    const at = completedAt.toISOString();
    const settle = outcome.status === "successful" ? capture("txn", outcome.ledgerNote) : release("txn", outcome.ledgerNote);
    const emitted = emitEvent(event, { transactionsCte: "txn" });
    const [result] = await queryRows<{ changed: number }>(
      db,
      sql`with txn as (
            update transactions
            set status = ${next.status}, completed_at = ${at}::timestamptz, updated_at = ${at}::timestamptz,
                metadata = ${JSON.stringify(next.metadata)}::jsonb, provider_reference = ${next.providerReference},
                failure_reason = ${next.failureReason}, lease_owner = null, lease_expires_at = null, next_attempt_at = null
            where id = ${id}::uuid and status = ${row.status} and updated_at = ${row.updatedAt.toISOString()}::timestamptz${leaseCondition(lease)}
            returning id, account_id, mode, price_kobo, reference, provider
          ), ${settle.wallet}, ${settle.entry}, ${emitted.parts},
          ${answerAttempt("txn", attemptAnswerOf(outcome), next.providerReference)}
          select count(*)::int as changed,
                 ${emitted.notify} as webhooks_due,
                 (select pg_notify(${finalChannel}, ${announcement}) where exists (select 1 from txn)) as final_announced
          from txn`,
    );
    if (Number(result?.changed) === 1) {
      if (next.batchId) await completeBatchesAfter(db, [next.batchId]);
      return { row: next, changed: true };
    }
    row = await current(db, id);
  }
  throw new Error(`transaction ${id} kept changing while being completed`);
}

/**
 * `processing` (or an already `pending` one) → `pending`, to be re-queried at `nextAttemptAt` (null:
 * never again by a worker), the provider's answer recorded on its attempt. With a `lease`, only while
 * that claim still holds it.
 */
export async function markPending(
  db: Executor,
  id: string,
  nextAttemptAt: Date | null,
  providerReference?: string,
  lease?: LeaseGuard,
  attempt: AttemptAnswer = { status: "pending" },
): Promise<TransitionResult> {
  const [changed] = await queryRows<{ id: string }>(
    db,
    sql`with txn as (
          update transactions
          set status = 'pending', updated_at = now(), next_attempt_at = ${nextAttemptAt?.toISOString() ?? null}::timestamptz,
              lease_owner = null, lease_expires_at = null,
              provider_reference = coalesce(${providerReference ?? null}, provider_reference)
          where id = ${id}::uuid and status in ('processing', 'pending')${leaseCondition(lease)}
          returning id, provider
        ), ${answerAttempt("txn", attempt, providerReference)}
        select id from txn`,
  );
  return { row: await current(db, id), changed: changed !== undefined };
}
