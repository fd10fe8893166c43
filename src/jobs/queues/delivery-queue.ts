import { webhookDueChannel } from "../../db/channels.ts";
import type { DbHandle } from "../../db/client.ts";
import type { Queue } from "../../lib/job-queue.ts";
import { type DeliveryDeps, deliverClaimed } from "../../webhooks/delivery.ts";
import { claimDueDeliveries } from "../../webhooks/delivery-claim.ts";
import { createRunner, type Runner } from "../runner.ts";

// A lease outlives the longest send (the timeout) by this much, so a live send never loses its row.
const leaseMarginMs = 30_000;

/**
 * Webhook deliveries: up to WEBHOOK_CONCURRENCY sends in flight, at most WEBHOOK_ENDPOINT_CONCURRENCY
 * of them for any one endpoint, so a dead endpoint's backlog gets its few slots and no more and
 * everyone else's webhooks go out beside it. Woken by NOTIFY on `webhookDueChannel`. Every attempt
 * is recorded; endpoint problems are outcomes, never thrown.
 */
export function webhookDeliveryQueue(deps: DeliveryDeps, workerId: string): Queue {
  const { concurrency, endpointConcurrency, timeoutMs } = deps.config.webhooks;
  return {
    name: "webhook deliveries",
    channel: webhookDueChannel,
    concurrency,
    perKeyLimit: endpointConcurrency,
    open: () => ({
      async claim({ limit, perKeyLimit, busy }) {
        const claimed = await claimDueDeliveries(deps.db, {
          limit,
          perEndpoint: perKeyLimit ?? endpointConcurrency,
          busy,
          leaseMs: timeoutMs + leaseMarginMs,
        });
        return claimed.map((delivery) => ({ key: delivery.endpointId, run: () => deliverClaimed(deps, delivery, workerId) }));
      },
      async close() {},
    }),
  };
}

/** Webhook delivery alone on a runner (its poll every `pollMs`, default WORKER_POLL_MS). */
export function webhookRunner(
  deps: DeliveryDeps & { database: Pick<DbHandle, "listen"> },
  workerId: string,
  options: { pollMs?: number } = {},
): Runner {
  return createRunner(deps, {
    queues: [webhookDeliveryQueue(deps, workerId)],
    pollMs: options.pollMs ?? deps.config.worker.pollMs,
    workerId,
  });
}
