import { randomBase62 } from "../../lib/random.ts";
import { signTimestampedCallback } from "../../lib/shared/callback-signature.ts";
import type { Logger } from "../../logger.ts";
import type { SandboxConfig } from "./config.ts";
import { sandboxName } from "./defaults.ts";
import type { SandboxOrderRow } from "./statements/claim-due-callbacks.ts";

/** How long one callback's POST may take. */
export const callbackSendTimeoutMs = 10_000;

export interface CallbackSendDeps {
  logger: Logger;
  /** Where this service's API is reachable. */
  apiBaseUrl: string;
}

/**
 * Plays the sandbox provider's side for one order whose callback is due: POSTs a signed callback to this
 * service's /callbacks/providers/sandbox, exactly as a provider would. `answered`: the API took it or refused it
 * for good (a 4xx, logged); `failed`: no answer, or a 5xx, so it is to be sent again.
 */
export async function sendSandboxCallback(
  deps: CallbackSendDeps,
  sandbox: SandboxConfig,
  order: SandboxOrderRow,
): Promise<"answered" | "failed"> {
  const { message, delivered_mb, ...result } = order.result;
  const body = JSON.stringify({
    event_id: `sbx_evt_${randomBase62(16)}`,
    reference: order.reference,
    status: order.status === "failed" ? "failed" : "successful",
    provider_reference: order.providerReference,
    ...result,
    ...(delivered_mb === undefined ? {} : { delivered_mb: Number(delivered_mb) }),
    ...(message === undefined ? {} : { message }),
  });
  try {
    const response = await fetch(`${deps.apiBaseUrl}/callbacks/providers/${sandboxName}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${sandbox.callbackToken}`,
        // Signed at each attempt: a retry carries a fresh timestamp inside the replay window.
        "x-provider-signature": signTimestampedCallback(sandbox.callbackSecret, body),
      },
      body,
      signal: AbortSignal.timeout(callbackSendTimeoutMs),
    });
    await response.arrayBuffer();
    if (response.status >= 500) throw new Error(`HTTP ${response.status}`);
    if (response.status >= 400)
      deps.logger.warn({ reference: order.reference, status: response.status }, "sandbox callback refused");
    return "answered";
  } catch (error) {
    deps.logger.warn({ reference: order.reference, err: String(error) }, "sandbox callback not delivered; retrying");
    return "failed";
  }
}
