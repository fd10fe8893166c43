import { signTimestampedCallback } from "../../src/callbacks/signature.ts";
import { type Config, loadConfig } from "../../src/config.ts";

const defaults = loadConfig({});

/** Configuration for tests that run background work: fast polls, short delays, tiny schedules. */
export function fastProcessing(overrides: Partial<Config> = {}): Partial<Config> {
  return {
    maxWaitSeconds: 10,
    worker: { ...defaults.worker, concurrency: 8, pollMs: 50, leaseSeconds: 5, requerySchedule: [0.2] },
    sandbox: { ...defaults.sandbox, callbackDelayMs: 150 },
    // Tests run their webhook receivers on 127.0.0.1.
    webhooks: { ...defaults.webhooks, retrySchedule: [0, 0.1, 0.1, 0.1], timeoutMs: 2000, allowPrivateUrls: true },
    ...overrides,
  };
}

/** A correctly signed sandbox callback, as `vendctl callbacks send` sends it. */
export function sandboxCallback(
  body: Record<string, unknown>,
  secret = defaults.sandbox.callbackSecret,
  token = defaults.sandbox.callbackToken,
) {
  const raw = JSON.stringify(body);
  return {
    raw,
    headers: {
      authorization: `Bearer ${token}`,
      "x-provider-signature": signTimestampedCallback(secret, raw),
      "content-type": "application/json",
    },
  };
}
