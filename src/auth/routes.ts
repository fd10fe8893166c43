import type { AppDeps } from "../deps.ts";
import { contextOf } from "../http/context.ts";
import { type Handlers, principalOf } from "../http/operations.ts";
import { evictEverywhere } from "../lib/caches.ts";
import { defaultGraceSeconds, listAccountKeys, rollApiKey, updateKeyAllowList } from "./key-management.ts";

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
    updateKey: async (input) => {
      const change = {
        keyId: input.params.id,
        allowedIps: input.body.allowed_ips,
        allowLockout: input.body.allow_lockout ?? false,
        clientAddress: contextOf(input.request).ip,
      };
      const { key, evict } = await updateKeyAllowList(deps.db, principalOf(input), change);
      await evictEverywhere(deps.database, deps.caches, "apiKeys", evict);
      return { status: 200, message: "API key allow-list updated", data: key };
    },
  } satisfies Partial<Handlers>;
  return handlers;
}
