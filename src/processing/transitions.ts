import { and, eq, inArray, sql } from "drizzle-orm";
import { transactions } from "../db/schema/index.ts";
import { type Executor, withTransaction } from "../db/transaction.ts";
import type { TransactionRow } from "../transactions/present.ts";
import { settleHold } from "../wallet/service.ts";
import { enqueueTransactionEvent } from "../webhooks/outbox.ts";

export type Status = TransactionRow["status"];
export const finalStatuses: readonly Status[] = ["successful", "failed"];
export const isFinal = (status: Status) => finalStatuses.includes(status);

/** Channel on which every final state change is announced (payload: the reference). */
export const finalChannel = "vend_txn_final";

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
 * Moves a transaction to `successful` or `failed` from a state that may lead there. In the same
 * database transaction: the wallet hold is captured (success) or released (failure), the outbox
 * event is written, and a NOTIFY announces it on commit. Repeating it changes nothing.
 */
export async function completeTransaction(db: Executor, id: string, outcome: FinalOutcome): Promise<TransitionResult> {
  return withTransaction(db, async (tx) => {
    const [row] = await tx
      .update(transactions)
      .set({
        status: outcome.status,
        completedAt: sql`now()`,
        updatedAt: sql`now()`,
        metadata: sql`${transactions.metadata} || ${JSON.stringify(outcome.metadata ?? {})}::jsonb`,
        providerReference: outcome.providerReference ?? sql`${transactions.providerReference}`,
        failureReason: outcome.status === "failed" ? outcome.reason : null,
        leaseOwner: null,
        leaseExpiresAt: null,
        nextAttemptAt: null,
      })
      .where(and(eq(transactions.id, id), inArray(transactions.status, [...allowedFrom[outcome.status]])))
      .returning();
    if (!row) return { row: await current(tx, id), changed: false };
    const wallet = { accountId: row.accountId, mode: row.mode };
    await settleHold(tx, wallet, row.priceKobo, outcome.status === "successful" ? "capture" : "release", row);
    await enqueueTransactionEvent(tx, row);
    await tx.execute(sql`select pg_notify(${finalChannel}, ${row.reference})`);
    return { row, changed: true };
  });
}

/** `processing` (or an already `pending` one) → `pending`, to be re-queried at `nextAttemptAt`. */
export async function markPending(
  db: Executor,
  id: string,
  nextAttemptAt: Date,
  providerReference?: string,
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
    .where(and(eq(transactions.id, id), inArray(transactions.status, [...allowedFrom.pending])))
    .returning();
  return row ? { row, changed: true } : { row: await current(db, id), changed: false };
}
