import type { AppDeps } from "../deps.ts";
import { idempotentOperation } from "../http/idempotent.ts";
import { type Handlers, preparedHandler } from "../http/operations.ts";
import { evictEverywhere } from "../lib/caches.ts";
import { applyCatalogueSync, compareCatalogue, fetchSyncLists } from "./catalogue-sync.ts";
import { listAnomalies } from "./list-anomalies.ts";
import { operationsSnapshot } from "./operations-snapshot.ts";
import { floatReconciliation, listFloatTopups, recordFloatTopup } from "./provider-float.ts";
import { providerStats } from "./provider-stats.ts";
import { providerOverview, switchProvider } from "./provider-status.ts";

/** What the provider admin routes use. */
export type ProviderAdminRouteDeps = Pick<
  AppDeps,
  "caches" | "config" | "cursors" | "database" | "db" | "metrics" | "providers" | "reads" | "runIdempotent"
>;

export function providerAdminRoutes(deps: ProviderAdminRouteDeps) {
  const handlers = {
    listProviders: async () => ({ status: 200, data: await providerOverview(deps) }),
    disableProvider: async ({ params, body, db, afterCommit }) => {
      const { before, after } = await switchProvider({ ...deps, db }, params.name, false, body.reason);
      afterCommit(() => deps.providers.health.refresh());
      const message = `Provider ${params.name} disabled; every process routes around it within seconds`;
      return { status: 200, message, data: after, audit: { before, note: body.reason } };
    },
    enableProvider: async ({ params, db, afterCommit }) => {
      const { before, after } = await switchProvider({ ...deps, db }, params.name, true, null);
      afterCommit(() => deps.providers.health.refresh());
      return { status: 200, message: `Provider ${params.name} enabled`, data: after, audit: { before } };
    },
    getProviderStats: async ({ params }) => ({
      status: 200,
      data: await deps.reads.read((db) => providerStats({ ...deps, db }, params.name)),
    }),
    getCatalogueSync: async ({ params }) => {
      const lists = await fetchSyncLists(deps, params.name);
      const { sync } = await deps.reads.read((db) => compareCatalogue(db, deps, lists));
      return { status: 200, data: sync };
    },
    // The providers are asked before the change's transaction opens; the differences are applied in it.
    applyCatalogueSync: preparedHandler(
      ({ params }) => fetchSyncLists(deps, params.name),
      async ({ body, db, afterCommit }, lists) => {
        const { result, before } = await applyCatalogueSync(db, deps, lists, body?.fingerprint);
        afterCommit(async () => {
          for (const product of result.applied) await evictEverywhere(deps.database, deps.caches, "products", product.code);
        });
        const message = `${result.applied.length} product(s) changed from ${lists.provider}'s plan list`;
        return { status: 200, message, data: result, audit: { before } };
      },
    ),
    getOperationsSnapshot: async ({ query }) => ({
      status: 200,
      data: await deps.reads.read((db) => operationsSnapshot({ ...deps, db }, query.since)),
    }),
    recordFloatTopup: async (input) =>
      idempotentOperation<"recordFloatTopup">(deps, input, "admin", async (tx) => ({
        status: 201,
        message: `Float top-up of ${input.params.name} recorded`,
        data: await recordFloatTopup({ ...deps, db: tx }, input.params.name, input.body),
      })),
    listFloatTopups: async ({ params, query }) => ({
      status: 200,
      data: await deps.reads.read((db) => listFloatTopups({ ...deps, db }, params.name, query)),
    }),
    floatReconciliation: async ({ params, query }) => ({
      status: 200,
      data: await deps.reads.read((db) => floatReconciliation({ ...deps, db }, params.name, query)),
    }),
    listAnomalies: async ({ query }) => ({
      status: 200,
      data: await deps.reads.read((db) => listAnomalies(db, deps.cursors, query)),
    }),
  } satisfies Partial<Handlers>;
  return handlers;
}
