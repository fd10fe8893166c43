import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { queryRows } from "../db/rows.ts";
import type { Executor } from "../db/transaction.ts";
import { AppError } from "../errors.ts";
import {
  type IdempotencyKey,
  type IdempotentResult,
  isRecordCollision,
  keyInFlight,
  lockNameOf,
  type PriorAnswer,
  retentionHours,
  storedAnswerOf,
} from "../idempotency/service.ts";
import { holds } from "../ledger/movements.ts";
import { randomBase62 } from "../lib/random.ts";
import type { Scope } from "../lib/scope.ts";
import { formatNgn } from "../lib/shared/money.ts";
import type { ProductRow } from "./product-cache.ts";
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

interface AcceptRow extends PriorAnswer {
  ord: number;
  /** What the wallet had available when this request's turn came (for a 402's message). */
  available_kobo: number | string;
  accepted: boolean;
  recorded_body: string | null;
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
    const token = `@${randomBase62(32)}@`;
    return { request, id, reference, token, body: request.render(presented(request, id, reference, token)) };
  });
  const batch = prepared.filter((p): p is Prepared => !(p instanceof AppError));
  let rows: AcceptRow[];
  try {
    rows = await acceptStatement(db, batch);
  } catch (error) {
    // A first request that committed between this statement's snapshot and its lock: the retry sees its record.
    if (!isRecordCollision(error)) throw error;
    rows = await acceptStatement(db, batch);
  }
  // A request's `ord` is its position in `batch`, which keeps the order of `prepared`.
  const byOrd = new Map(rows.map((row) => [Number(row.ord), row]));
  let ord = 0;
  return prepared.map((p) => (p instanceof AppError ? p : outcomeOf(p, byOrd.get(ord++))));
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

/** The database clock at millisecond precision, as stored and as the answer shows it (`toISOString`). */
const createdAt = sql.raw("date_trunc('milliseconds', now())");
const createdIso = sql.raw(`to_char(date_trunc('milliseconds', now()) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

/**
 * The statement: requests travel as one JSON parameter, so its text is the same for any batch and is
 * prepared once per connection. `fit` walks the free requests in order, placing each hold that the
 * balance left by the earlier ones covers (the wallet row is locked first, so the balance is current).
 */
function acceptStatement(db: Executor, batch: Prepared[]): Promise<AcceptRow[]> {
  const input = batch.map((p, ord) => {
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
  });
  const held = holds("accepted");
  return queryRows<AcceptRow>(
    db,
    sql`with recursive
      input as (
        select * from json_to_recordset(${JSON.stringify(input)}::json) as i(
          ord int, account_id uuid, mode text, lock text, scope text, method text, path text, key text, fingerprint text, id uuid, reference text,
          product_code text, network text, service text, destination text, amount_kobo bigint, price_kobo bigint,
          metadata jsonb, client_reference text, provider text, body text, token text, trace_context text, batch_id uuid)
      ),
      claimed as (
        -- An order without a key of its own (a bulk order's) is free: the enclosing key is held.
        select i.ord, case when i.lock is null then true else pg_try_advisory_xact_lock(hashtextextended(i.lock, 0)) end as locked,
               r.response_status as status,
               r.response_body as body, r.fingerprint, r.expires_at <= now() as expired, r.ctid as record
        from input i
        -- One primary-key lookup per request whatever the planner guesses of the sizes (a prepared statement's
        -- plan outlives the statistics it was made with): the limit keeps the lateral from becoming a hash join.
        left join lateral (
          select r.ctid, r.response_status, r.response_body, r.fingerprint, r.expires_at from idempotency_records r
          where r.scope = i.scope and r.method = i.method and r.path = i.path and r.key = i.key
          limit 1
        ) r on true
        order by i.ord
      ),
      wallet_ids as (
        select w.id, k.account_id, k.mode from (select distinct account_id, mode from input) k
        cross join lateral (select id from wallets w where w.account_id = k.account_id and w.mode = k.mode limit 1) w
      ),
      -- Locked in id order (like every statement that moves several wallets), so none waits on another in a cycle.
      wallets_locked as (
        select w.id, x.account_id, x.mode, w.balance_kobo - w.held_kobo as available_kobo
        from (select * from wallet_ids order by id) x
        cross join lateral (select * from wallets w where w.id = x.id limit 1 for update) w
      ),
      free_keys as (
        select row_number() over (partition by wl.id order by c.ord) as n, c.ord, wl.id as wallet_id, i.price_kobo
        from claimed c join input i on i.ord = c.ord
        join wallets_locked wl on wl.account_id = i.account_id and wl.mode = i.mode
        where c.locked and (c.status is null or c.expired)
      ),
      fit (wallet_id, n, before, remaining, fits) as (
        select id, 0::bigint, null::bigint, available_kobo, true from wallets_locked
        union all
        select f.wallet_id, f.n, fit.remaining,
               case when f.price_kobo <= fit.remaining then fit.remaining - f.price_kobo else fit.remaining end,
               coalesce(f.price_kobo <= fit.remaining, false)
        from fit join free_keys f on f.wallet_id = fit.wallet_id and f.n = fit.n + 1
      ),
      accepted as (
        select f.ord, f.wallet_id, i.id as transaction_id, f.price_kobo as amount_kobo,
               sum(f.price_kobo) over (partition by f.wallet_id order by f.ord)::bigint as running_kobo
        from free_keys f join fit on fit.wallet_id = f.wallet_id and fit.n = f.n and fit.fits join input i on i.ord = f.ord
      ),
      ${held.wallet},
      txn as (
        insert into transactions (id, reference, account_id, mode, status, product_code, network, service, destination,
                                  amount_kobo, price_kobo, metadata, client_reference, batch_id, provider, trace_context,
                                  next_attempt_at, created_at, updated_at)
        select i.id, i.reference, i.account_id, i.mode, 'queued', i.product_code, i.network, i.service,
               i.destination, i.amount_kobo, i.price_kobo, i.metadata, i.client_reference, i.batch_id, i.provider, i.trace_context,
               ${createdAt}, ${createdAt}, ${createdAt}
        from accepted a join input i on i.ord = a.ord join ${held.walletRow} hw on hw.id = a.wallet_id
        order by a.ord
        returning id
      ),
      ${held.entry},
      expired as (
        delete from idempotency_records
        where ctid = any (array(select c.record from claimed c join free_keys f on f.ord = c.ord where c.expired))
        returning key
      ),
      recorded as (
        insert into idempotency_records (scope, method, path, key, fingerprint, response_status, response_body, expires_at)
        select i.scope, i.method, i.path, i.key, i.fingerprint, 202, replace(i.body, i.token, ${createdIso}),
               now() + make_interval(hours => ${retentionHours})
        from accepted a join input i on i.ord = a.ord join ${held.walletRow} hw on hw.id = a.wallet_id
        where i.lock is not null and (select count(*) from expired) >= 0
        returning scope, method, path, key, response_body
      )
      select c.ord, c.locked, c.status, c.body, c.fingerprint, c.expired,
             coalesce((select fit.before from free_keys f join fit on fit.wallet_id = f.wallet_id and fit.n = f.n
                       where f.ord = c.ord), 0) as available_kobo,
             a.ord is not null and exists (select 1 from ${held.walletRow} hw where hw.id = a.wallet_id) as accepted,
             (select r.response_body from recorded r join input i
                on r.scope = i.scope and r.method = i.method and r.path = i.path and r.key = i.key
              where i.ord = c.ord) as recorded_body
      from claimed c left join accepted a on a.ord = c.ord
      order by c.ord`,
  );
}
