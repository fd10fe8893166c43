import type { AppDeps } from "../deps.ts";
import { contextOf } from "../http/context.ts";
import { type Handlers, principalOf } from "../http/operations.ts";
import { recordKeyEnd } from "./api-key-records.ts";
import { knowChangedKey } from "./credential-registry.ts";
import { defaultGraceSeconds, listAccountKeys, rollApiKey, updateKeyAllowList } from "./key-management.ts";

/** What the key routes use: the database and the key registry. */
export type KeyRouteDeps = Pick<AppDeps, "config" | "credentialSync" | "credentials" | "db">;

export function keyRoutes(deps: KeyRouteDeps) {
  const handlers = {
    listKeys: async (input) => ({ status: 200, data: await listAccountKeys(deps.db, principalOf(input)) }),
    rollKey: async (input) => {
      const grace = input.body?.grace_seconds ?? defaultGraceSeconds;
      const { rolled, changed, ended } = await rollApiKey(deps.db, principalOf(input), grace, deps.config.keyPropagationMs);
      for (const key of changed) knowChangedKey(deps.credentials, key);
      // A key ended now is answered once every process refuses it; the recorded instant is that moment.
      if (ended.length > 0) await deps.credentialSync.inForce();
      for (const { keyId, end } of ended) {
        const recorded = await recordKeyEnd(deps.db, keyId, end);
        if (recorded.id === rolled.previous.id) rolled.previous = recorded;
      }
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
      const { key, changed } = await updateKeyAllowList(deps.db, principalOf(input), change);
      knowChangedKey(deps.credentials, changed);
      return { status: 200, message: "API key allow-list updated", data: key };
    },
  } satisfies Partial<Handlers>;
  return handlers;
}
