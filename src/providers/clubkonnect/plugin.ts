import type { ProviderPlugin } from "../types.ts";
import { readClubkonnectCallback } from "./callbacks.ts";
import { clubkonnectName, createClubkonnectProvider } from "./client.ts";
import { type ClubkonnectConfig, readClubkonnectConfig } from "./config.ts";

/**
 * The live provider modelled on ClubKonnect, configured by the `CLUBKONNECT_*` variables. ClubKonnect's
 * callbacks are unauthenticated GETs, so they are no final word: they only hint that an order should be
 * re-queried (callbacks.ts reads them), and the plugin declares no signed callbacks.
 */
export const clubkonnectPlugin = {
  name: clubkonnectName,
  mode: "live",
  envPrefix: "CLUBKONNECT_",
  readConfig: readClubkonnectConfig,
  // A job may re-query then send: the lease must outlast two calls.
  longestCall: (config) => ({ ms: config.timeoutMs, variable: "CLUBKONNECT_TIMEOUT_MS" }),
  createAdapter: (config) => createClubkonnectProvider(config),
  callbackHint(query) {
    const hint = readClubkonnectCallback(query);
    if (!hint) return null;
    return {
      ...(hint.requestId ? { requestId: hint.requestId } : {}),
      ...(hint.orderId ? { providerReference: hint.orderId } : {}),
    };
  },
} satisfies ProviderPlugin<ClubkonnectConfig, typeof clubkonnectName>;
