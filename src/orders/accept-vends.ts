import { randomUUID } from "node:crypto";
import { newInstantToken } from "../db/clock.ts";
import type { Executor } from "../db/transaction.ts";
import { AppError } from "../errors.ts";
import {
  type IdempotencyKey,
  type IdempotentResult,
  isRecordCollision,
  keyInFlight,
  lockNameOf,
  storedAnswerOf,
} from "../idempotency/protocol.ts";
import { randomBase62 } from "../lib/random.ts";
import type { Scope } from "../lib/scope.ts";
import { formatNgn } from "../lib/shared/money.ts";
import type { ProductRow } from "./product-cache.ts";
import { type AcceptInput, type AcceptRow, runAcceptStatement } from "./statements/accept.ts";
import { presentTransaction, type Transaction } from "./view.ts";

/** A vend request resolved against the catalogue: everything needed to accept it. */
export interface VendOrder {
  product: ProductRow;
  destination: string;
  amountKobo: number;
  priceKobo: number;
  clientReference: string | null;
  /** Caller metadata (service-owned keys removed) merged with the service-set keys. */
  metadata: Record<string, string>;
}

const newReference = () => `txn_${randomBase62(24)}`;

/** One vend request, resolved, under its Idempotency-Key. */
export interface AcceptRequest {
  /** The wallet it is paid from. */
  wallet: Scope;
  key: IdempotencyKey;
  /** The bulk order (`vend_batches`) it belongs to. */
  batchId?: string;
  /** The request body's fingerprint (`fingerprintOf`). */
  fingerprint: string;
  order: VendOrder;
  provider: string;
  /** The W3C traceparent of the accepting request's span, stored so processing and webhooks join its trace. */
  traceContext?: string;
  /** The answer's JSON body for the accepted transaction as presented. */
  render(transaction: Transaction): string;
}

/**
 * An order covered by an enclosing key (a bulk order's, claimed by the caller in the same database
 * transaction): no key of its own, so no lock and no record.
 */
export interface CoveredAcceptRequest extends Omit<AcceptRequest, "key"> {
  key: null;
}

type AnyAcceptRequest = AcceptRequest | CoveredAcceptRequest;

/** What became of one request: its answer (fresh or replayed) and, when it was accepted now, its reference. */
export interface AcceptOutcome {
  result: IdempotentResult;
  reference?: string;
}

interface Prepared {
  request: AnyAcceptRequest;
  id: string;
  reference: string;
  /** Stands for the creation time in the rendered body until the statement knows it (the database clock). */
  token: string;
  body: string;
}

/**
 * Accepts vends, for one wallet or several, in ONE statement (an implicit transaction, one round trip),
 * for each request in order: the claim of its Idempotency-Key (advisory lock, stored answer), then, for
 * those free to run, the holds that fit each wallet's available balance one after another in arrival
 * order (so `available_kobo` never goes below zero), each accepted order's `queued` transaction row, hold
 * ledger entry and idempotency record (the answer, created_at from the database clock). A single request
 * is a batch of one. Each request is answered as if it had run alone: 202 (or the replayed answer), 409
 * for a key in flight (also a key repeated within the batch), 422 for a key used with another body,
 * and 402 with nothing written when the balance does not cover it (the caller records that answer).
 */
export async function acceptVends(db: Executor, requests: readonly AnyAcceptRequest[]): Promise<(AcceptOutcome | AppError)[]> {
  const seen = new Set<string>();
  const prepared = requests.map((request): Prepared | AppError => {
    if (request.key) {
      const lock = lockNameOf(request.key);
      if (seen.has(lock)) return keyInFlight();
      seen.add(lock);
    }
    const id = randomUUID();
    const reference = newReference();
    const token = newInstantToken();
    return { request, id, reference, token, body: request.render(presented(request, id, reference, token)) };
  });
  const batch = prepared.filter((p): p is Prepared => !(p instanceof AppError));
  const input = batch.map(toInput);
  let rows: AcceptRow[];
  try {
    rows = await runAcceptStatement(db, input);
  } catch (error) {
    // A first request that committed between this statement's snapshot and its lock: the retry sees its record.
    if (!isRecordCollision(error)) throw error;
    rows = await runAcceptStatement(db, input);
  }
  // A request's `ord` is its position in `batch`, which keeps the order of `prepared`.
  const byOrd = new Map(rows.map((row) => [Number(row.ord), row]));
  let ord = 0;
  return prepared.map((p) => (p instanceof AppError ? p : outcomeOf(p, byOrd.get(ord++))));
}

/** A request as the accept statement takes it; its position in the batch is `ord`. */
function toInput(p: Prepared, ord: number): AcceptInput {
  const { key, fingerprint, order, provider, wallet } = p.request;
  return {
    ord,
    account_id: wallet.accountId,
    mode: wallet.mode,
    lock: key ? lockNameOf(key) : null,
    scope: key?.scope ?? null,
    method: key?.method ?? null,
    path: key?.path ?? null,
    key: key?.key ?? null,
    fingerprint,
    id: p.id,
    reference: p.reference,
    product_code: order.product.code,
    network: order.product.network,
    service: order.product.service,
    destination: order.destination,
    amount_kobo: order.amountKobo,
    price_kobo: order.priceKobo,
    metadata: order.metadata,
    client_reference: order.clientReference,
    provider,
    body: p.body,
    token: p.token,
    trace_context: p.request.traceContext ?? null,
    batch_id: p.request.batchId ?? null,
  };
}

function outcomeOf(p: Prepared, row: AcceptRow | undefined): AcceptOutcome | AppError {
  if (!row) throw new Error("the accept statement did not answer every request");
  if (row.accepted && (row.recorded_body !== null || p.request.key === null))
    return { result: { status: 202, body: row.recorded_body ?? p.body, replayed: false }, reference: p.reference };
  try {
    const stored = storedAnswerOf(row, p.request.fingerprint);
    if (stored) return { result: stored };
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  return new AppError(
    "WALLET_INSUFFICIENT_FUNDS",
    `Insufficient wallet balance: available NGN ${formatNgn(Number(row.available_kobo))}, required NGN ${formatNgn(p.request.order.priceKobo)}`,
  );
}

/** The transaction as the answer shows it, its creation time a placeholder (see Prepared.token). */
function presented(request: AnyAcceptRequest, id: string, reference: string, token: string): Transaction {
  const { order, wallet } = request;
  const placeholder = new Date(0);
  const transaction = presentTransaction({
    id,
    reference,
    accountId: wallet.accountId,
    mode: wallet.mode,
    status: "queued",
    productCode: order.product.code,
    network: order.product.network,
    service: order.product.service,
    destination: order.destination,
    amountKobo: order.amountKobo,
    priceKobo: order.priceKobo,
    metadata: order.metadata,
    clientReference: order.clientReference,
    batchId: request.batchId ?? null,
    provider: request.provider,
    providerRequestId: null,
    providerReference: null,
    attempts: 0,
    providerSends: 0,
    leaseOwner: null,
    leaseExpiresAt: null,
    nextAttemptAt: placeholder,
    failureReason: null,
    traceContext: null,
    stuckRaisedAt: null,
    createdAt: placeholder,
    updatedAt: placeholder,
    completedAt: null,
  });
  return { ...transaction, created_at: token };
}
