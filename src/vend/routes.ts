import type { ServiceCode } from "../../generated/constants.ts";
import type { AppDeps } from "../deps.ts";
import { AppError, successEnvelope } from "../errors.ts";
import { contextOf } from "../http/context.ts";
import { accountScope, answerOf, idempotencyKeyOf, idempotentOperation } from "../http/idempotent.ts";
import { type Handlers, type OperationInput, principalOf, type SuccessDataOf } from "../http/operations.ts";
import { componentCheck, type ValueCheck } from "../http/validation.ts";
import { fingerprintOf } from "../idempotency/protocol.ts";
import { groupCommit } from "../lib/group-commit.ts";
import type { Mode } from "../lib/scope.ts";
import type { VendLabels } from "../metrics/metrics.ts";
import { type AcceptOutcome, type AcceptRequest, acceptVends } from "../orders/accept-vends.ts";
import { getTransactionByReference } from "../orders/lookup.ts";
import { accountPricing, planPriceFor } from "../orders/plan-pricing.ts";
import { findProduct } from "../orders/product-cache.ts";
import { readAfterWait, waitBudgetMs } from "../orders/waiters.ts";
import {
  acceptVendBatch,
  type BatchItem,
  getVendBatch,
  listVendBatches,
  type OrderCheck,
  resolveBatchOrders,
} from "./batches.ts";
import {
  type ChooseRoute,
  type PriceOf,
  type ProductLookup,
  resolveCableVend,
  resolveElectricityVend,
  resolveProductVend,
  type VendOrder,
  type VendResolver,
} from "./requests.ts";

type VendOperation = "vendProduct" | "vendElectricity" | "vendCable";
const acceptedMessage = "Transaction accepted for processing; the final status arrives by webhook, by wait, or by listing";

/** The most vends one accept statement takes (see groupCommit). */
const maxAcceptBatch = 64;

/** A product by code, through the shared product cache. */
const productLookup =
  (deps: AppDeps): ProductLookup =>
  (code) =>
    deps.caches.products.getOrLoad(code, () => findProduct(deps.db, code));

/** What the account's wallet pays, on its price plan (through the shared plan caches: no query on a hit). */
const pricer = async (deps: AppDeps, accountId: string): Promise<PriceOf> => {
  const plan = await accountPricing(deps.db, deps.caches, accountId);
  return (product, amountKobo) => planPriceFor(plan, product, amountKobo);
};

/** The provider an order of `mode` for a product goes to now. */
const routeChooser =
  (deps: AppDeps, mode: Mode): ChooseRoute =>
  (product) =>
    deps.providers.routeFor(mode, { service: product.service, network: product.network }).name;

export function vendRoutes(deps: AppDeps) {
  /**
   * Accept statements run in lanes, one statement in flight per lane: accepts arriving while their lane's
   * statement runs go together in its next one. A wallet always uses the same lane, so its accepts keep
   * their arrival order; several lanes keep several connections busy (half the pool).
   */
  const lanes = Math.max(1, Math.floor(deps.config.databasePoolSize / 2));
  const laneOf = (accountId: string) => String(Number.parseInt(accountId.slice(-8), 16) % lanes);
  const accept = groupCommit<AcceptRequest, AcceptOutcome>((_, batch) => acceptVends(deps.db, batch), maxAcceptBatch);
  /**
   * Resolve, route and accept under the Idempotency-Key, in one statement, combined with the other
   * accepts of its lane that arrive meanwhile. A refusal (402, an unknown product) is
   * answered under the key like any other answer; a 503 NO_ROUTE (no available provider for the
   * product) stores nothing, so a retry once a provider is back is a fresh attempt.
   */
  const vend =
    <Id extends VendOperation>(resolve: VendResolver<OperationInput<Id>["body"]>) =>
    async (input: OperationInput<Id>) => {
      const principal = principalOf(input);
      const wallet = { accountId: principal.accountId, mode: principal.mode };
      const scope = accountScope(principal);
      let outcome: AcceptOutcome;
      let labels: VendLabels;
      try {
        const route = routeChooser(deps, principal.mode);
        const order = await resolve(productLookup(deps), input.body, route, await pricer(deps, wallet.accountId));
        const provider = order.metadata.route ?? route(order.product);
        labels = { service: order.product.service, network: order.product.network, provider };
        outcome = await accept(laneOf(wallet.accountId), {
          wallet,
          key: idempotencyKeyOf(input, scope),
          fingerprint: fingerprintOf(input.body),
          order,
          provider,
          traceContext: contextOf(input.request).traceparent,
          render: (transaction) => JSON.stringify(successEnvelope(transaction, acceptedMessage)),
        });
      } catch (error) {
        if (!(error instanceof AppError) || error.code.startsWith("IDEMPOTENCY_")) throw error;
        return idempotentOperation<Id>(deps, input, scope, () => Promise.reject(error));
      }
      const result = answerOf<Id>(outcome.result);
      const acceptedReference = outcome.reference;
      if (result.status !== 202 || !acceptedReference) return result;
      // Accepted now, not a stored answer replayed.
      deps.metrics.vendAccepted(labels);
      deps.announceWork();
      const wait = (input.query as { wait?: number }).wait ?? 0;
      if (wait <= 0) return result;
      // The stored answer (replayed on retries) is the acceptance; a waiting client gets the transaction as it stands.
      const reference = acceptedReference;
      const budget = waitBudgetMs(wait, deps.config, contextOf(input.request).startedAt);
      const latest = await readAfterWait(deps.waiters, reference, budget, () =>
        getTransactionByReference(deps.db, wallet, reference),
      );
      return { status: 202, message: acceptedMessage, data: latest as SuccessDataOf<Id> };
    };
  const handlers = {
    vendProduct: vend<"vendProduct">(resolveProductVend),
    vendElectricity: vend<"vendElectricity">(resolveElectricityVend),
    vendCable: vend<"vendCable">(resolveCableVend),
    ...batchHandlers(deps),
  } satisfies Partial<Handlers>;
  return handlers;
}

const batchAcceptedMessage = "Batch accepted; each accepted order is processed on its own (see counts and rejections)";

/** `POST /api/v1/vend/batches`, `GET /api/v1/vend/batches` and `GET /api/v1/vend/batches/{id}`. */
function batchHandlers(deps: AppDeps) {
  const productCheck = componentCheck(deps.spec, "VendRequest");
  const checks: Record<ServiceCode, ValueCheck> = {
    airtime: productCheck,
    data: productCheck,
    electricity: componentCheck(deps.spec, "ElectricityVendRequest"),
    cable: componentCheck(deps.spec, "CableVendRequest"),
  };
  const check: OrderCheck = (service, fields) => checks[service](fields);
  return {
    /**
     * Every order is resolved first (as its single vend), outside the database transaction; then the
     * whole batch is accepted in ONE database transaction with the record of its Idempotency-Key: the batch
     * row, every transaction, hold and ledger entry and the stored answer commit together or not at all.
     */
    createVendBatch: async (input: OperationInput<"createVendBatch">) => {
      const principal = principalOf(input);
      const wallet = { accountId: principal.accountId, mode: principal.mode };
      const scope = accountScope(principal);
      const route = routeChooser(deps, principal.mode);
      let items: BatchItem[];
      try {
        const price = await pricer(deps, wallet.accountId);
        items = await resolveBatchOrders({ lookup: productLookup(deps), route, price, check }, input.body.orders);
      } catch (error) {
        // A whole-batch refusal (503 NO_ROUTE) replays a stored answer under the key, and stores nothing itself.
        if (!(error instanceof AppError) || error.code.startsWith("IDEMPOTENCY_")) throw error;
        return idempotentOperation<"createVendBatch">(deps, input, scope, () => Promise.reject(error));
      }
      let accepted: VendOrder[] = [];
      const traceContext = contextOf(input.request).traceparent;
      const result = await idempotentOperation<"createVendBatch">(deps, input, scope, async (tx) => {
        const acceptance = await acceptVendBatch(tx, { wallet, items, traceContext });
        accepted = acceptance.accepted;
        return { status: 202, data: acceptance.batch, message: batchAcceptedMessage };
      });
      if (accepted.length > 0) {
        for (const order of accepted)
          deps.metrics.vendAccepted({
            service: order.product.service,
            network: order.product.network,
            provider: order.metadata.route ?? route(order.product),
          });
        deps.announceWork();
      }
      return result;
    },
    listVendBatches: async (input: OperationInput<"listVendBatches">) => ({
      status: 200,
      data: await listVendBatches(deps.db, deps.cursors, principalOf(input), input.query),
    }),
    getVendBatch: async (input: OperationInput<"getVendBatch">) => ({
      status: 200,
      data: await getVendBatch(deps.db, deps.cursors, principalOf(input), input.params.id, input.query),
    }),
  } satisfies Partial<Handlers>;
}
