import type { ProviderPlugin } from "../types.ts";
import { sandboxCallbackQueue } from "./callback-queue.ts";
import { readSandboxConfig, type SandboxConfig } from "./config.ts";
import { sandboxName } from "./defaults.ts";
import { createSandboxProvider } from "./provider.ts";

/**
 * The built-in test-mode provider, always configured. It answers from this service's own database
 * (no call bound), and its callbacks sign a timestamp with the body (`timestamped`), so a captured
 * callback stops being accepted once it leaves the replay window. Its delayed callbacks are posted to
 * this service's API at their due time by a queue of the background runner (callback-queue.ts).
 */
export const sandboxPlugin = {
  name: sandboxName,
  mode: "test",
  envPrefix: "SANDBOX_",
  readConfig: readSandboxConfig,
  createAdapter: (config, { db }) => createSandboxProvider(db, config),
  callbacks: (config) => ({ token: config.callbackToken, secret: config.callbackSecret, scheme: "timestamped" }),
  queues: (config, context) => [sandboxCallbackQueue(context, config)],
} satisfies ProviderPlugin<SandboxConfig, typeof sandboxName>;
