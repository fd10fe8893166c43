import type { components } from "../../generated/openapi-types.ts";
import type { Config } from "../config.ts";
import type { Executor } from "../db/transaction.ts";
import { AppError } from "../errors.ts";
import { writeSwitch } from "../providers/health.ts";
import type { Providers } from "../providers/registry.ts";

type Schemas = components["schemas"];

export interface ProviderAdminDeps {
  db: Executor;
  providers: Providers;
  config: Config;
}

/** The provider of this name, or 404 naming those there are. */
export function knownProvider(providers: Providers, name: string) {
  const entry = providers.list().find((p) => p.name === name);
  if (!entry) {
    const names = providers.list().map((p) => p.name);
    throw new AppError("NOT_FOUND", `Unknown provider ${name}; the providers are ${names.join(", ")}`);
  }
  return entry;
}

/** Whether the provider's reported float is below its configured threshold. */
export function lowBalance(config: Config, name: string, balanceKobo: number | null): boolean {
  const threshold = config.routing.lowBalanceKobo[name];
  return threshold !== undefined && balanceKobo !== null && balanceKobo < threshold;
}

/** A provider's status as this process sees it; with `state`, as that switch (just written) makes it. */
function presentStatus(
  deps: ProviderAdminDeps,
  name: string,
  state = deps.providers.health.switchOf(name),
): Schemas["ProviderStatus"] {
  const { health } = deps.providers;
  const entry = knownProvider(deps.providers, name);
  const breakers = health.breakersOf(name).map((b) => ({
    service: b.service as Schemas["ProviderBreaker"]["service"],
    state: b.state,
    consecutive_failures: b.consecutiveFailures,
    open_until: b.openUntil?.toISOString() ?? null,
  }));
  return {
    name,
    mode: entry.mode,
    enabled: state.enabled,
    disabled_reason: state.disabledReason,
    disabled_at: state.disabledAt?.toISOString() ?? null,
    available: state.enabled && breakers[0]?.state !== "open",
    breakers,
    balance_kobo: state.balanceKobo,
    balance_checked_at: state.balanceCheckedAt?.toISOString() ?? null,
    low_balance_kobo: deps.config.routing.lowBalanceKobo[name] ?? null,
    low_balance: lowBalance(deps.config, name, state.balanceKobo),
  };
}

/** Every provider as this process sees it after re-reading the shared state, and the effective routes. */
export async function providerOverview(deps: ProviderAdminDeps): Promise<Schemas["ProviderOverview"]> {
  await deps.providers.health.refresh();
  return {
    providers: deps.providers.list().map((p) => presentStatus(deps, p.name)),
    routes: deps.providers.effectiveRoutes(),
    product_codes: deps.config.routing.productCodes,
    providers_file: deps.config.routing.file ?? null,
  };
}

/**
 * An operator's switch, written on `deps.db` (the caller's transaction): this process applies it with
 * `deps.providers.health.refresh()` once it has committed, every other process on its next refresh.
 * Answers the provider's status before and after.
 */
export async function switchProvider(
  deps: ProviderAdminDeps,
  name: string,
  enabled: boolean,
  reason: string | null,
): Promise<{ before: Schemas["ProviderStatus"]; after: Schemas["ProviderStatus"] }> {
  knownProvider(deps.providers, name);
  const before = presentStatus(deps, name);
  const written = await writeSwitch(deps.db, name, enabled, reason);
  return { before, after: presentStatus(deps, name, written) };
}
