import type { AppDeps } from "../deps.ts";
import { type Handlers, principalOf } from "../http/operations.ts";
import { evictEverywhere } from "../lib/caches.ts";
import { defaultGraceSeconds, listAccountKeys, rollApiKey } from "./key-management.ts";

export function keyRoutes(deps: AppDeps) {
  const handlers = {
    listKeys: async (input) => ({ status: 200, data: await listAccountKeys(deps.db, principalOf(input)) }),
    rollKey: async (input) => {
      const grace = input.body?.grace_seconds ?? defaultGraceSeconds;
      const { rolled, evict } = await rollApiKey(deps.db, principalOf(input), grace);
      for (const hash of evict) await evictEverywhere(deps.database, deps.caches, "apiKeys", hash);
      const message = "API key rolled; store the new key now, it is not shown again";
      return { status: 201, message, data: rolled };
    },
  } satisfies Partial<Handlers>;
  return handlers;
}
