import { hostname } from "node:os";
import type { DbHandle } from "./db/client.ts";
import type { AppDeps } from "./deps.ts";
import { webhookDeliveryQueue } from "./jobs/queues/delivery-queue.ts";
import { transactionQueue } from "./jobs/queues/transaction-queue.ts";
import { createRunner, type Runner } from "./jobs/runner.ts";
import { batchCompletionSweepTask } from "./jobs/tasks/batch-completion-sweep.ts";
import { catalogueDriftTasks } from "./jobs/tasks/catalogue-sync.ts";
import { idempotencySweepTask } from "./jobs/tasks/idempotency-sweep.ts";
import { partitionsAheadTask } from "./jobs/tasks/partitions-ahead.ts";
import { providerBalanceTask } from "./jobs/tasks/provider-balances.ts";
import { providerWorkQueues, providerWorkTasks } from "./jobs/tasks/provider-work.ts";
import { rateWindowCleanupTask } from "./jobs/tasks/rate-window-cleanup.ts";
import { retentionTask } from "./jobs/tasks/retention.ts";
import { stuckOrdersTask } from "./jobs/tasks/stuck-orders.ts";
import { randomBase62 } from "./lib/random.ts";
import type { ProcessingDeps } from "./orders/processing.ts";
import { retentionStatements } from "./roles/retention-statements.ts";

export const newWorkerId = () => `${hostname()}:${process.pid}:${randomBase62(6)}`;

export interface WorkerDeps extends ProcessingDeps {
  database: DbHandle;
  /** Where this service's API is reachable (the sandbox's callbacks are posted there). */
  apiBaseUrl: string;
}

/**
 * Transaction processing and the providers' own background work (the sandbox's delayed callbacks), without
 * webhook delivery: a tick claims what is due on each queue and processes it, then runs the providers' tasks once.
 */
export function processingRunner(deps: WorkerDeps, workerId = newWorkerId()): Runner {
  return createRunner(deps, {
    queues: [transactionQueue(deps, workerId), ...providerWorkQueues(deps)],
    tasks: providerWorkTasks(deps),
    pollMs: deps.config.worker.pollMs,
    workerId,
  });
}

export interface Background {
  workerId: string;
  stop(): Promise<void>;
}

/**
 * Everything a process runs in the background, on one runner: its queues (src/jobs/queues/) and its periodic
 * tasks (src/jobs/tasks/). `stop` lets in-flight work finish and gives back leases.
 */
export function startBackground(deps: AppDeps, apiBaseUrl: string, workerId = newWorkerId()): Background {
  const runner = createRunner(deps, {
    queues: [
      transactionQueue(deps, workerId),
      webhookDeliveryQueue(deps, workerId),
      ...providerWorkQueues({ ...deps, apiBaseUrl }),
    ],
    tasks: [
      ...providerWorkTasks({ ...deps, apiBaseUrl }),
      providerBalanceTask(deps),
      idempotencySweepTask(deps),
      stuckOrdersTask(deps),
      batchCompletionSweepTask(deps),
      retentionTask(deps, retentionStatements),
      partitionsAheadTask(deps),
      rateWindowCleanupTask(deps),
      ...catalogueDriftTasks(deps),
    ],
    pollMs: deps.config.worker.pollMs,
    workerId,
  });
  runner.start();
  return { workerId, stop: () => runner.stop() };
}
