import { liveHttpPlugin } from "../live-http-plugin.ts";
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
  ...liveHttpPlugin(clubkonnectName, "CLUBKONNECT_", readClubkonnectConfig, createClubkonnectProvider),
  callbackHint(query) {
    const hint = readClubkonnectCallback(query);
    if (!hint) return null;
    return {
      ...(hint.requestId ? { requestId: hint.requestId } : {}),
      ...(hint.orderId ? { providerReference: hint.orderId } : {}),
    };
  },
} satisfies ProviderPlugin<ClubkonnectConfig, typeof clubkonnectName>;
