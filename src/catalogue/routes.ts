import type { AppDeps } from "../deps.ts";
import type { Handlers } from "../http/operations.ts";
import { evictEverywhere } from "../lib/caches.ts";
import { getPricing, listNetworks, listProducts, listServices, updateProduct } from "./service.ts";

export function catalogueRoutes(deps: AppDeps) {
  const handlers = {
    listNetworks: async ({ query }) => ({ status: 200, data: await listNetworks(deps.db, query.service) }),
    listServices: async () => ({ status: 200, data: await listServices(deps.db) }),
    listProducts: async ({ query }) => ({ status: 200, data: await listProducts(deps.db, query) }),
    getPricing: async ({ query }) => ({ status: 200, data: await getPricing(deps.db, query) }),
    updateProduct: async ({ params, body }) => {
      const { before, after } = await updateProduct(deps.db, params.code, body);
      await evictEverywhere(deps.database, deps.caches, "products", params.code);
      return { status: 200, message: "Product updated", data: after, audit: { before } };
    },
  } satisfies Partial<Handlers>;
  return handlers;
}
