import { liveHttpPlugin } from "../live-http-plugin.ts";
import type { ProviderPlugin } from "../types.ts";
import { translateVtuCallback } from "./callbacks.ts";
import { createVtuProvider, vtuName } from "./client.ts";
import { readVtuConfig, type VtuConfig } from "./config.ts";

/**
 * The live HTTP provider, modelled on VTpass, configured by the `VTU_*` variables. VTpass signs no
 * timestamp: a replayed callback is harmless only because applying an outcome is idempotent (the same
 * outcome again changes nothing; a contradiction is 409).
 */
export const vtuPlugin = {
  ...liveHttpPlugin(vtuName, "VTU_", readVtuConfig, createVtuProvider),
  callbacks: (config) => ({
    token: config.callbackToken,
    secret: config.callbackSecret,
    scheme: "body",
    translate: translateVtuCallback,
  }),
} satisfies ProviderPlugin<VtuConfig, typeof vtuName>;
