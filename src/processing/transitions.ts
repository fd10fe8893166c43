import { and, eq, inArray, sql } from "drizzle-orm";
import { queryRows } from "../db/rows.ts";
import { transactions } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import type { Transaction, TransactionRow } from "../transactions/present.ts";
import { buildTransactionEvent, webhookDueChannel } from "../webhooks/outbox.ts";

export type Status = TransactionRow["status"];
export const finalStatuses: readonly Status[] = ["successful", "failed"];
export const isFinal = (status: Status) => finalStatuses.includes(status);

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

export function parseFinalAnnouncement(payload: string): { reference: string; transaction?: Transaction } {
  try {
    const parsed = JSON.parse(payload) as { reference?: unknown; transaction?: Transaction };
    if (typeof parsed.reference === "string") return { reference: parsed.reference, transaction: parsed.transaction };
  } catch {}
  return { reference: payload };
}

/**
 * The transitions the service makes (interface spec section 3). Anything else changes nothing.
 * `reversed` and `refunded` are never set; `created` is not used.
 */
const allowedFrom: Record<"processing" | "pending" | "successful" | "failed", readonly Status[]> = {
  processing: ["queued"],
  pending: ["processing", "pending"],
  successful: ["processing", "pending"],
  failed: ["processing", "pending"],
};

export type FinalOutcome =
  | { status: "successful"; providerReference?: string; metadata?: Record<string, string> }
  | { status: "failed"; providerReference?: string; reason: string; metadata?: Record<string, string> };

/**
 * A worker's claim on a transaction (its lease owner and the claim's `attempts`). A worker's
 * transitions are guarded on it, so a worker whose lease was taken over changes nothing.
 * Provider callbacks and operator re-queries transition without one.
 */
export interface LeaseGuard {
  leaseOwner: string;
  attempts: number;
}

const holdsLease = (row: TransactionRow, lease: LeaseGuard | undefined) =>
  !lease || (row.leaseOwner === lease.leaseOwner && row.attempts === lease.attempts);

const leaseCondition = (lease: LeaseGuard | undefined) =>
  lease ? sql` and lease_owner = ${lease.leaseOwner} and attempts = ${lease.attempts}` : sql``;

export interface TransitionResult {
  row: TransactionRow;
  /** False when the guard did not match: the transaction was already elsewhere (e.g. final). */
  changed: boolean;
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
    const next: TransactionRow = {
      ...row,
      status: outcome.status,
      completedAt,
      updatedAt: completedAt,
      metadata: { ...row.metadata, ...outcome.metadata },
      providerReference: outcome.providerReference ?? row.providerReference,
      failureReason: outcome.status === "failed" ? outcome.reason : null,
      leaseOwner: null,
      leaseExpiresAt: null,
      nextAttemptAt: null,
    };
    const event = buildTransactionEvent(next);
    const announcement = finalAnnouncement(next.reference, event.payload.data);
    const at = completedAt.toISOString();
    const kind = outcome.status === "successful" ? "capture" : "release";
    const [result] = await queryRows<{ changed: number }>(
      db,
      sql`with txn as (
            update transactions
            set status = ${next.status}, completed_at = ${at}::timestamptz, updated_at = ${at}::timestamptz,
                metadata = ${JSON.stringify(next.metadata)}::jsonb, provider_reference = ${next.providerReference},
                failure_reason = ${next.failureReason}, lease_owner = null, lease_expires_at = null, next_attempt_at = null
            where id = ${id}::uuid and status = ${row.status} and updated_at = ${row.updatedAt.toISOString()}::timestamptz${leaseCondition(lease)}
            returning id, account_id, mode, price_kobo, reference
          ), settled as (
            update wallets w
            set held_kobo = w.held_kobo - txn.price_kobo,
                balance_kobo = w.balance_kobo - (case when ${kind} = 'capture' then txn.price_kobo else 0 end),
                updated_at = now()
            from txn where w.account_id = txn.account_id and w.mode = txn.mode
            returning w.id, w.balance_kobo, w.held_kobo, txn.price_kobo, txn.id as transaction_id
          ), entry as (
            insert into ledger_entries (wallet_id, kind, amount_kobo, balance_delta_kobo, held_delta_kobo,
                                        balance_after_kobo, held_after_kobo, transaction_id)
            select id, ${kind}, price_kobo, (case when ${kind} = 'capture' then -price_kobo else 0 end), -price_kobo,
                   balance_kobo, held_kobo, transaction_id
            from settled where price_kobo > 0
          ), event as (
            insert into events (id, account_id, mode, type, transaction_id, payload, created_at)
            select ${event.id}, txn.account_id, txn.mode, ${event.type}, txn.id, ${JSON.stringify(event.payload)}::jsonb, ${event.createdAt}::timestamptz
            from txn
            returning id, account_id, mode
          ), deliveries as (
            insert into webhook_deliveries (event_id, endpoint_id, status, next_attempt_at)
            select event.id, e.id, 'pending', now() from event
            join webhook_endpoints e on e.account_id = event.account_id and e.mode = event.mode and e.deleted_at is null
            returning event_id
          )
          select count(*)::int as changed,
                 (select pg_notify(${webhookDueChannel}, ${event.id}) where exists (select 1 from deliveries)) as webhooks_due,
                 (select pg_notify(${finalChannel}, ${announcement}) where exists (select 1 from txn)) as final_announced
          from txn`,
    );
    if (Number(result?.changed) === 1) return { row: next, changed: true };
    row = await current(db, id);
  }
  throw new Error(`transaction ${id} kept changing while being completed`);
}

/**
 * `processing` (or an already `pending` one) → `pending`, to be re-queried at `nextAttemptAt`.
 * With a `lease`, only while that claim still holds it.
 */
export async function markPending(
  db: Executor,
  id: string,
  nextAttemptAt: Date,
  providerReference?: string,
  lease?: LeaseGuard,
): Promise<TransitionResult> {
  const [row] = await db
    .update(transactions)
    .set({
      status: "pending",
      updatedAt: sql`now()`,
      nextAttemptAt,
      leaseOwner: null,
      leaseExpiresAt: null,
      providerReference: providerReference ?? sql`${transactions.providerReference}`,
    })
    .where(
      and(
        eq(transactions.id, id),
        inArray(transactions.status, [...allowedFrom.pending]),
        lease && eq(transactions.leaseOwner, lease.leaseOwner),
        lease && eq(transactions.attempts, lease.attempts),
      ),
    )
    .returning();
  return row ? { row, changed: true } : { row: await current(db, id), changed: false };
}
