import type { Mode } from "../auth/keys.ts";
import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import { AppError } from "../errors.ts";
import { createSandboxProvider } from "./sandbox.ts";
import type { ProviderAdapter } from "./types.ts";

export interface Providers {
  get(name: string): ProviderAdapter | undefined;
  /** The provider a vend of this mode goes to; 503 NO_ROUTE (nothing created) when there is none. */
  routeFor(mode: Mode): ProviderAdapter;
}

/** Test mode always uses the sandbox; live mode uses the configured HTTP provider. */
export function createProviders(db: Database, config: Config, extra: ProviderAdapter[] = []): Providers {
  const byName = new Map<string, ProviderAdapter>([["sandbox", createSandboxProvider(db, config.sandbox)]]);
  for (const adapter of extra) byName.set(adapter.name, adapter);
  const live = [...byName.values()].find((p) => p.name !== "sandbox");
  return {
    get: (name) => byName.get(name),
    routeFor(mode) {
      const sandbox = byName.get("sandbox");
      if (mode === "test" && sandbox) return sandbox;
      if (!live) throw new AppError("NO_ROUTE", "No provider route is configured for live vends; nothing was created or charged");
      return live;
    },
  };
}
