import type { Config } from "../config.ts";
import { FixedWindowCounter } from "../lib/fixed-window.ts";
import { configuredCallbackHints, configuredCallbacks } from "./registry.ts";
import type { CallbackHint, ProviderCallbacks } from "./types.ts";

/** The providers that may call back, and how their callbacks are checked and stored (per process). */
export interface CallbackProviders {
  /** How each provider's callbacks are authenticated and read (its plugin says so). */
  byName: Map<string, ProviderCallbacks>;
  /** Providers that notify by unsigned GETs: how each names the order. */
  hints: Map<string, (query: Record<string, string>) => CallbackHint | null>;
  /** How far a timestamped signature may be from now, either way. */
  replayWindowSeconds: number;
  /** Refused callbacks stored per provider per minute in this process; past it they are not stored. */
  refusedPerMinute: number;
  refusedStored: FixedWindowCounter;
}

/** Every configured provider may call back; each plugin says how its callbacks are signed and read. */
export function callbackProviders(config: Config): CallbackProviders {
  return {
    byName: configuredCallbacks(config),
    hints: configuredCallbackHints(config),
    replayWindowSeconds: config.callbacks.replayWindowSeconds,
    refusedPerMinute: config.callbacks.rejectedPerMinute,
    refusedStored: new FixedWindowCounter(),
  };
}
