/**
 * The sandbox's documented defaults and magic numbers. Pure constants; the outcome table and the callback
 * credentials' defaults live in src/lib/shared/sandbox-outcomes.ts, which the CLI shares with the server.
 */
export {
  defaultSandboxCallbackSecret,
  defaultSandboxCallbackToken,
  type SandboxScenario,
  sandboxDefaultScenario,
  sandboxScenarioFor,
  sandboxScenarios,
} from "../../lib/shared/sandbox-outcomes.ts";

/** The test-mode provider's name: its transactions' `provider` and its callback URL segment. */
export const sandboxName = "sandbox";

/** `SANDBOX_CALLBACK_DELAY_MS` when unset: how long after the vend a delayed callback is due. */
export const defaultSandboxCallbackDelayMs = 2000;
/** `SANDBOX_LATENCY_MS` when unset: simulated answer time. */
export const defaultSandboxLatencyMs = 0;

/** A meter or smartcard number ending in this belongs to no customer. */
export const unknownCustomerSuffix = "0000";
