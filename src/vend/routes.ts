import { findProduct } from "../catalogue/service.ts";
import type { AppDeps } from "../deps.ts";
import { accountScope, idempotentOperation } from "../http/idempotent.ts";
import { type Handlers, type OperationInput, operationRoutes, principalOf, type SuccessDataOf } from "../http/operations.ts";
import type { Transaction } from "../transactions/present.ts";
import { type ProductLookup, resolveCableVend, resolveElectricityVend, resolveProductVend, type VendOrder } from "./requests.ts";
import { acceptVend, routeFor } from "./service.ts";

type VendOperation = "vendProduct" | "vendElectricity" | "vendCable";
const accepted = "Transaction accepted for processing; the final status arrives by webhook, by wait, or by listing";

export function vendRoutes(deps: AppDeps) {
  /** Route check first (503 NO_ROUTE stores nothing), then resolve and accept under the Idempotency-Key. */
  const vend =
    <Id extends VendOperation>(
      resolve: (lookup: ProductLookup, body: OperationInput<Id>["body"], route: string) => Promise<VendOrder>,
    ) =>
    async (input: OperationInput<Id>) => {
      const principal = principalOf(input);
      const provider = routeFor(principal.mode);
      return idempotentOperation<Id>(deps, input, accountScope(principal), async (tx, { now, answerFirst }) => {
        const lookup: ProductLookup = (code) => deps.caches.products.getOrLoad(code, () => findProduct(tx, code));
        const order = await resolve(lookup, input.body, provider);
        const answer = (transaction: Transaction) => ({ status: 202, message: accepted, data: transaction as SuccessDataOf<Id> });
        const transaction = await acceptVend(tx, principal, order, {
          provider,
          createdAt: now,
          beforeHold: (early) => answerFirst(answer(early)),
        });
        return answer(transaction);
      });
    };
  const handlers: Handlers = {
    vendProduct: vend<"vendProduct">(resolveProductVend),
    vendElectricity: vend<"vendElectricity">(resolveElectricityVend),
    vendCable: vend<"vendCable">(resolveCableVend),
  };
  return { handlers, routes: operationRoutes("vend", deps, handlers) };
}
