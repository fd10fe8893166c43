import type { AppDeps } from "../deps.ts";
import type { Handlers } from "../http/operations.ts";
import { listAnomalies, providerOverview, providerStats, switchProvider } from "./service.ts";

export function providerAdminRoutes(deps: AppDeps) {
  const handlers = {
    listProviders: async () => ({ status: 200, data: await providerOverview(deps) }),
    disableProvider: async ({ params, body }) => ({
      status: 200,
      message: `Provider ${params.name} disabled; every process routes around it within seconds`,
      data: await switchProvider(deps, params.name, false, body.reason),
    }),
    enableProvider: async ({ params }) => ({
      status: 200,
      message: `Provider ${params.name} enabled`,
      data: await switchProvider(deps, params.name, true, null),
    }),
    getProviderStats: async ({ params }) => ({ status: 200, data: await providerStats(deps, params.name) }),
    listAnomalies: async ({ query }) => ({ status: 200, data: await listAnomalies(deps.db, deps.cursors, query) }),
  } satisfies Partial<Handlers>;
  return handlers;
}
