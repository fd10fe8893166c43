import type { EnvReader } from "../config.ts";
import type { ProviderAdapter, ProviderPlugin } from "./types.ts";

/**
 * What every live HTTP provider's plugin declares the same way: live mode, its variables under `envPrefix`, and
 * a lease that must outlast two of its calls (a job may re-query then send), bounded by `<prefix>TIMEOUT_MS`.
 */
export function liveHttpPlugin<C extends { timeoutMs: number }, N extends string>(
  name: N,
  envPrefix: string,
  readConfig: (read: EnvReader) => C | undefined,
  createAdapter: (config: C) => ProviderAdapter,
) {
  return {
    name,
    mode: "live",
    envPrefix,
    readConfig,
    longestCall: (config) => ({ ms: config.timeoutMs, variable: `${envPrefix}TIMEOUT_MS` }),
    createAdapter: (config) => createAdapter(config),
  } satisfies ProviderPlugin<C, N>;
}
