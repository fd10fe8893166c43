import type { Database } from "../../db/client.ts";
import { groupCommit } from "../../lib/group-commit.ts";
import type { Queue } from "../../lib/job-queue.ts";
import { type CallbackSendDeps, callbackSendTimeoutMs, sendSandboxCallback } from "./callbacks.ts";
import type { SandboxConfig } from "./config.ts";
import { claimDueCallbacks } from "./statements/claim-due-callbacks.ts";
import { markCallbacksSent } from "./statements/mark-callbacks-sent.ts";
import { retryCallback } from "./statements/retry-callback.ts";

/** Announced when the sandbox books an order whose callback is to come, so an idle queue learns its due time. */
export const sandboxCallbackChannel = "vend_sandbox_callback_due";

/** A callback that could not be sent is due again after this long. */
const retryAfterMs = 5000;
/** A claimed callback's lease outlives its longest send by this much, so a live send never loses it. */
const leaseMarginMs = 20_000;

export interface SandboxCallbackDeps extends CallbackSendDeps {
  db: Database;
}

/**
 * The sandbox's delayed callbacks as a queue of the one runner: each callback is a row of `sandbox_orders`
 * (durable: a restart sends what is due), claimed in batches when due, its POSTs in flight side by side, their
 * sends recorded together (group-committed). The queue sleeps until the next callback is due (`nextDueMs`), and a
 * NOTIFY on `sandboxCallbackChannel` tells it of each new one, so a callback goes out at its due time, whatever
 * WORKER_POLL_MS. A claim leases the callback rather than marking it sent: a process that dies before the send
 * leaves it to be claimed again when the lease runs out, and a send whose record was lost is sent twice, which
 * the callback endpoint takes as the same outcome again (each order completes once).
 */
export function sandboxCallbackQueue(deps: SandboxCallbackDeps, sandbox: SandboxConfig): Queue {
  const markSent = groupCommit<string, undefined>(async (_key, references) => {
    await markCallbacksSent(deps.db, references);
    return references.map(() => undefined);
  }, 256);
  return {
    name: "sandbox callbacks",
    channel: sandboxCallbackChannel,
    concurrency: 32,
    open(loop) {
      let nextDueMs: number | undefined;
      return {
        async claim({ limit }) {
          const taken = await claimDueCallbacks(deps.db, limit, callbackSendTimeoutMs + leaseMarginMs);
          nextDueMs = taken.nextDueMs;
          return taken.map((order) => ({
            async run() {
              if ((await sendSandboxCallback(deps, sandbox, order)) === "answered") {
                await markSent("sent", order.reference);
                return;
              }
              await retryCallback(deps.db, order.reference, retryAfterMs);
              // The loop learns the new due time at its next claim.
              loop?.wake();
            },
          }));
        },
        nextDueMs: () => nextDueMs,
        async close() {},
      };
    },
  };
}
