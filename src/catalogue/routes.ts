import type { AppDeps } from "../deps.ts";
import { conditionalAnswer } from "../http/conditional.ts";
import type { Handlers } from "../http/operations.ts";
import { evictEverywhere } from "../lib/caches.ts";
import { getPricing, listNetworks, listProducts, listServices } from "./catalogue-listing.ts";
import { updateProduct } from "./update-product.ts";

export function catalogueRoutes(deps: AppDeps) {
  const handlers = {
    listNetworks: async (input) => conditionalAnswer(input, await deps.reads.read((db) => listNetworks(db, input.query.service))),
    listServices: async (input) => conditionalAnswer(input, await deps.reads.read(listServices)),
    listProducts: async (input) => conditionalAnswer(input, await deps.reads.read((db) => listProducts(db, input.query))),
    getPricing: async (input) => conditionalAnswer(input, await deps.reads.read((db) => getPricing(db, input.query))),
    updateProduct: async ({ params, body, db, afterCommit }) => {
      const { before, after, changed } = await updateProduct(db, params.code, body);
      if (changed) afterCommit(() => evictEverywhere(deps.database, deps.caches, "products", params.code));
      return { status: 200, message: "Product updated", data: after, audit: { before } };
    },
  } satisfies Partial<Handlers>;
  return handlers;
}
