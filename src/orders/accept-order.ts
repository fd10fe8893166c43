import { AppError, successEnvelope } from "../errors.ts";
import { fingerprintOf, type IdempotencyKey, type IdempotentResult, runIdempotent } from "../idempotency/protocol.ts";
import type { Mode, Scope } from "../lib/scope.ts";
import type { Metrics, VendLabels } from "../metrics/metrics.ts";
import type { Providers } from "../providers/registry.ts";
import type { AcceptLanes } from "./accept-lanes.ts";
import type { AcceptOutcome } from "./accept-vends.ts";
import { accountPricing, type PlanCaches, planPriceFor } from "./plan-pricing.ts";
import { findProduct, type ProductCache } from "./product-cache.ts";
import { type ChooseRoute, type PriceOf, type ProductLookup, resolveVendRequest, type VendRequest } from "./vend-requests.ts";
import type { Transaction } from "./view.ts";
import { getTransactionAfterWait, type WaitContext } from "./waiters.ts";

/** What accepting vends runs on, per process: the database, the hot-path caches, routing, the lanes and the waiters. */
export interface AcceptContext extends WaitContext {
  caches: PlanCaches & { products: ProductCache };
  providers: Pick<Providers, "routeFor">;
  metrics: Pick<Metrics, "vendAccepted">;
  /** Tells workers (debounced NOTIFY) that new work was accepted. */
  announceWork(): void;
  acceptLanes: AcceptLanes;
}

/** A product by code, through the shared product cache. */
export const productLookup =
  (ctx: Pick<AcceptContext, "db" | "caches">): ProductLookup =>
  (code) =>
    ctx.caches.products.getOrLoad(code, () => findProduct(ctx.db, code));

/** What the account's wallet pays, on its price plan (through the shared plan caches: no query on a hit). */
export async function pricer(ctx: Pick<AcceptContext, "db" | "caches">, accountId: string): Promise<PriceOf> {
  const plan = await accountPricing(ctx.db, ctx.caches, accountId);
  return (product, amountKobo) => planPriceFor(plan, product, amountKobo);
}

/** The provider an order of `mode` for a product goes to now. */
export const routeChooser =
  (ctx: Pick<AcceptContext, "providers">, mode: Mode): ChooseRoute =>
  (product) =>
    ctx.providers.routeFor(mode, { service: product.service, network: product.network }).name;

/**
 * A refusal before anything was accepted (a 402, an unknown product, a 503 NO_ROUTE) answered under the
 * Idempotency-Key like any other answer, by the general protocol: it stores what it stores (not a 503, so a
 * retry once a provider is back is a fresh attempt) and replays what was stored. Anything else is thrown.
 */
export async function answerRefusal(
  ctx: Pick<AcceptContext, "db">,
  key: IdempotencyKey,
  body: unknown,
  error: unknown,
): Promise<IdempotentResult> {
  if (!(error instanceof AppError) || error.code.startsWith("IDEMPOTENCY_")) throw error;
  return runIdempotent(ctx.db, key, body, () => Promise.reject(error));
}

const acceptedMessage = "Transaction accepted for processing; the final status arrives by webhook, by wait, or by listing";

/** One vend request to accept. */
export interface VendInput {
  /** The wallet that pays: the caller's account and mode. */
  wallet: Scope;
  key: IdempotencyKey;
  request: VendRequest;
  /** The W3C traceparent of the accepting request's span. */
  traceContext?: string;
  /** Seconds the caller asked to wait for the final state (0: answer at once). */
  waitSeconds: number;
  /** `performance.now()` when the request arrived: the wait ends before the request's timeout. */
  startedAt: number;
}

/** The answer: the one stored under the key (fresh or replayed, byte for byte), or after a wait the order as it stands. */
export type VendAnswer = { stored: IdempotentResult } | { waited: Transaction; message: string };

/**
 * Accepts a vend: resolved against the catalogue, routed, priced on the account's plan, then accepted under
 * its Idempotency-Key in ONE statement, combined with the other accepts of its wallet's lane that arrive
 * meanwhile (`acceptLanes`). A refusal is answered under the key (`answerRefusal`). Accepted now (not
 * replayed), it is counted and the workers are told; a caller who asked to wait gets the order once it is
 * final or the wait is over, while the stored answer (replayed on retries) stays the acceptance.
 */
export async function acceptVend({ ctx, input }: { ctx: AcceptContext; input: VendInput }): Promise<VendAnswer> {
  const { wallet, key, request } = input;
  let outcome: AcceptOutcome;
  let labels: VendLabels;
  try {
    const route = routeChooser(ctx, wallet.mode);
    const order = await resolveVendRequest(request, productLookup(ctx), route, await pricer(ctx, wallet.accountId));
    const provider = order.metadata.route ?? route(order.product);
    labels = { service: order.product.service, network: order.product.network, provider };
    outcome = await ctx.acceptLanes({
      wallet,
      key,
      fingerprint: fingerprintOf(request.body),
      order,
      provider,
      traceContext: input.traceContext,
      render: (transaction) => JSON.stringify(successEnvelope(transaction, acceptedMessage)),
    });
  } catch (error) {
    return { stored: await answerRefusal(ctx, key, request.body, error) };
  }
  const reference = outcome.reference;
  if (outcome.result.status !== 202 || !reference) return { stored: outcome.result };
  // Accepted now, not a stored answer replayed.
  ctx.metrics.vendAccepted(labels);
  ctx.announceWork();
  if (input.waitSeconds <= 0) return { stored: outcome.result };
  const wait = { scope: wallet, reference, waitSeconds: input.waitSeconds, startedAt: input.startedAt };
  return { waited: await getTransactionAfterWait({ ctx, input: wait }), message: acceptedMessage };
}
