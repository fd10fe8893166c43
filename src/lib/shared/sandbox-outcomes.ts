// Shared by the server and the CLI: pure (no database, configuration or feature code). The sandbox provider
// (src/providers/sandbox/) runs this table; vendctl trigger and callbacks send rely on it.

/** `SANDBOX_CALLBACK_TOKEN` when unset: the bearer token of sandbox callbacks. */
export const defaultSandboxCallbackToken = "sandbox-callback-token";
/** `SANDBOX_CALLBACK_SECRET` when unset: the HMAC secret of sandbox callback signatures. */
export const defaultSandboxCallbackSecret = "sandbox-callback-secret";

/** What the sandbox does with a vend, chosen by the destination's last four digits. */
export interface SandboxScenario {
  /** The answer to the vend. */
  status: "successful" | "failed" | "pending";
  /** A pending order's status in the signed callback that follows; absent: no callback. */
  eventualStatus?: "successful" | "failed";
  /** The failure message (of the answer or of the callback). */
  message?: string;
  /** The first send times out after the order is booked; a re-query finds it. */
  timeoutFirst?: boolean;
  /** Data bundles: half the requested size is delivered. */
  partial?: boolean;
  /** One line for people: what a tester sees. */
  description: string;
}

/** The destination's last four digits choose the outcome; any other ending is `sandboxDefaultScenario`. */
export const sandboxScenarios: Readonly<Record<string, SandboxScenario>> = {
  "1111": { status: "failed", message: "Sandbox: declined (destination ends in 1111)", description: "failed at once" },
  "2222": {
    status: "pending",
    eventualStatus: "successful",
    description: "pending, then a signed callback: successful (after SANDBOX_CALLBACK_DELAY_MS)",
  },
  "3333": {
    status: "pending",
    eventualStatus: "failed",
    message: "Sandbox: declined after review (3333)",
    description: "pending, then a signed callback: failed",
  },
  "4444": { status: "pending", description: "pending with no callback" },
  "5555": {
    status: "successful",
    timeoutFirst: true,
    description: "provider error/timeout first; the re-query finds it successful",
  },
  "6666": { status: "successful", partial: true, description: "successful, data bundle only partly delivered" },
};

export const sandboxDefaultScenario: SandboxScenario = { status: "successful", description: "successful at once" };

/** The scenario a destination selects. */
export function sandboxScenarioFor(destination: string): SandboxScenario {
  const ending = destination.slice(-4);
  return (Object.hasOwn(sandboxScenarios, ending) ? sandboxScenarios[ending] : undefined) ?? sandboxDefaultScenario;
}
