import type { AppDeps } from "../deps.ts";
import { conditionalAnswer } from "../http/conditional.ts";
import { type Handlers, principalOf } from "../http/operations.ts";
import { evictEverywhere } from "../lib/caches.ts";
import { accountPricing } from "../orders/plan-pricing.ts";
import { getPricing, listNetworks, listProducts, listServices } from "./catalogue-listing.ts";
import { createPricePlan, listPricePlans, setAccountPricePlan, updatePricePlan } from "./price-plans.ts";
import { updateProduct } from "./update-product.ts";

/** What the catalogue routes use. */
export type CatalogueRouteDeps = Pick<AppDeps, "caches" | "database" | "db" | "reads">;

export function catalogueRoutes(deps: CatalogueRouteDeps) {
  /** The caller's price plan, through the process's caches. */
  const planOf = (input: Parameters<typeof principalOf>[0]) => accountPricing(deps.db, deps.caches, principalOf(input).accountId);
  const handlers = {
    listNetworks: async (input) => conditionalAnswer(input, await deps.reads.read((db) => listNetworks(db, input.query.service))),
    listServices: async (input) => conditionalAnswer(input, await deps.reads.read(listServices)),
    listProducts: async (input) => {
      const plan = await planOf(input);
      return conditionalAnswer(input, await deps.reads.read((db) => listProducts(db, input.query, plan)));
    },
    getPricing: async (input) => {
      const plan = await planOf(input);
      return conditionalAnswer(input, await deps.reads.read((db) => getPricing(db, input.query, plan)));
    },
    updateProduct: async ({ params, body, db, afterCommit }) => {
      const { before, after, changed } = await updateProduct(db, params.code, body);
      if (changed) afterCommit(() => evictEverywhere(deps.database, deps.caches, "products", params.code));
      return { status: 200, message: "Product updated", data: after, audit: { before } };
    },
    listPricePlans: async () => ({ status: 200, data: await deps.reads.read(listPricePlans) }),
    createPricePlan: async ({ body, db }) => {
      const plan = await createPricePlan(db, body);
      return { status: 201, message: "Price plan created", data: plan, audit: { target: { type: "price_plan", id: plan.name } } };
    },
    updatePricePlan: async ({ params, body, db, afterCommit }) => {
      const { before, after, discountsChanged } = await updatePricePlan(db, params.name, body);
      if (discountsChanged) afterCommit(() => evictEverywhere(deps.database, deps.caches, "pricePlans", params.name));
      return {
        status: 200,
        message: "Price plan updated",
        data: after,
        audit: { before, target: { type: "price_plan", id: params.name } },
      };
    },
    setAccountPricePlan: async ({ params, body, db, afterCommit }) => {
      const { before, account, changed } = await setAccountPricePlan(db, params.account_id, body.plan);
      if (changed) afterCommit(() => evictEverywhere(deps.database, deps.caches, "accountPlans", params.account_id));
      const message = changed
        ? `Account moved to price plan ${account.price_plan}`
        : `Account is on price plan ${account.price_plan} already; nothing changed`;
      return { status: 200, message, data: account, audit: { before } };
    },
  } satisfies Partial<Handlers>;
  return handlers;
}
