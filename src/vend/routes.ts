import type { AppDeps } from "../deps.ts";
import { contextOf } from "../http/context.ts";
import { accountScope, idempotentOperation } from "../http/idempotent.ts";
import { type Handlers, type OperationInput, principalOf, type SuccessDataOf } from "../http/operations.ts";
import type { Transaction } from "../processing/present.ts";
import { findProduct } from "../processing/products.ts";
import { readAfterWait, waitBudgetMs } from "../processing/waiters.ts";
import { getTransactionByReference } from "../transactions/service.ts";
import {
  type ChooseRoute,
  type ProductLookup,
  resolveCableVend,
  resolveElectricityVend,
  resolveProductVend,
  type VendOrder,
} from "./requests.ts";
import { acceptVend } from "./service.ts";

type VendOperation = "vendProduct" | "vendElectricity" | "vendCable";
const acceptedMessage = "Transaction accepted for processing; the final status arrives by webhook, by wait, or by listing";

export function vendRoutes(deps: AppDeps) {
  /**
   * Resolve, route and accept under the Idempotency-Key; a 503 NO_ROUTE (no available provider for the
   * product) stores nothing, so a retry once a provider is back is a fresh attempt.
   */
  const vend =
    <Id extends VendOperation>(
      resolve: (lookup: ProductLookup, body: OperationInput<Id>["body"], route: ChooseRoute) => Promise<VendOrder>,
    ) =>
    async (input: OperationInput<Id>) => {
      const principal = principalOf(input);
      let acceptedReference: string | undefined;
      const result = await idempotentOperation<Id>(deps, input, accountScope(principal), async (tx, { now, answerFirst }) => {
        const lookup: ProductLookup = (code) => deps.caches.products.getOrLoad(code, () => findProduct(tx, code));
        const route: ChooseRoute = (product) =>
          deps.providers.routeFor(principal.mode, { service: product.service, network: product.network }).name;
        const order = await resolve(lookup, input.body, route);
        const provider = order.metadata.route ?? route(order.product);
        const answer = (transaction: Transaction) => ({
          status: 202,
          message: acceptedMessage,
          data: transaction as SuccessDataOf<Id>,
        });
        const transaction = await acceptVend(tx, principal, order, {
          provider,
          createdAt: now,
          beforeHold: (early) => answerFirst(answer(early)),
        });
        acceptedReference = transaction.reference;
        return answer(transaction);
      });
      if (result.status !== 202 || !acceptedReference) return result;
      deps.announceWork();
      const wait = (input.query as { wait?: number }).wait ?? 0;
      if (wait <= 0) return result;
      // The stored answer (replayed on retries) is the acceptance; a waiting client gets the transaction as it stands.
      const reference = acceptedReference;
      const scope = { accountId: principal.accountId, mode: principal.mode };
      const budget = waitBudgetMs(wait, deps.config, contextOf(input.request).startedAt);
      const latest = await readAfterWait(deps.waiters, reference, budget, () =>
        getTransactionByReference(deps.db, scope, reference),
      );
      return { status: 202, message: acceptedMessage, data: latest as SuccessDataOf<Id> };
    };
  const handlers = {
    vendProduct: vend<"vendProduct">(resolveProductVend),
    vendElectricity: vend<"vendElectricity">(resolveElectricityVend),
    vendCable: vend<"vendCable">(resolveCableVend),
  } satisfies Partial<Handlers>;
  return handlers;
}
