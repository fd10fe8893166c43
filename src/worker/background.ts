import type { AppDeps } from "../deps.ts";
import { startWebhookDelivery } from "../webhooks/delivery.ts";
import { newWorkerId, startWorker } from "./loop.ts";

export interface Background {
  workerId: string;
  stop(): Promise<void>;
}

/**
 * Everything a process runs in the background: transaction processing (with the sandbox's
 * callbacks) and webhook delivery. `stop` lets in-flight work finish and gives back leases.
 */
export function startBackground(deps: AppDeps, apiBaseUrl: string, workerId = newWorkerId()): Background {
  const controller = new AbortController();
  const worker = startWorker({ ...deps, apiBaseUrl }, controller.signal, workerId);
  const webhooks = startWebhookDelivery({ ...deps, signal: controller.signal, workerId, pollMs: deps.config.worker.pollMs });
  return {
    workerId,
    async stop() {
      controller.abort();
      await Promise.all([worker.done, webhooks]);
    },
  };
}
