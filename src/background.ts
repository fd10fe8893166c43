import { hostname } from "node:os";
import type { DbHandle } from "./db/client.ts";
import { createPartitionsAhead } from "./db/partitions.ts";
import type { AppDeps } from "./deps.ts";
import { transactionQueue } from "./jobs/queues/transactions.ts";
import { webhookDeliveryQueue } from "./jobs/queues/webhook-deliveries.ts";
import { createRunner, type Runner } from "./jobs/runner.ts";
import { idempotencySweepTask } from "./jobs/tasks/idempotency-sweep.ts";
import { providerBalanceTask } from "./jobs/tasks/provider-balances.ts";
import { stuckOrdersTask } from "./jobs/tasks/stuck-orders.ts";
import { randomBase62 } from "./lib/random.ts";
import { batchCompletionSweepTask } from "./orders/batch-completion.ts";
import type { ProcessingDeps } from "./orders/processing.ts";
import { providerTasks } from "./providers/registry.ts";
import { retentionTask } from "./retention/pass.ts";

export const newWorkerId = () => `${hostname()}:${process.pid}:${randomBase62(6)}`;

export interface WorkerDeps extends ProcessingDeps {
  database: DbHandle;
  /** Where this service's API is reachable (the sandbox's callbacks are posted there). */
  apiBaseUrl: string;
}

const providerWork = (deps: WorkerDeps) =>
  providerTasks(deps.config, {
    db: deps.db,
    logger: deps.logger,
    apiBaseUrl: deps.apiBaseUrl,
    pollMs: deps.config.worker.pollMs,
  });

/**
 * Transaction processing and the providers' periodic work (the sandbox's callbacks), without webhook
 * delivery: a tick claims due transactions, processes them, then runs the providers' tasks once.
 */
export function processingRunner(deps: WorkerDeps, workerId = newWorkerId()): Runner {
  return createRunner(deps, {
    queues: [transactionQueue(deps, workerId)],
    tasks: providerWork(deps),
    pollMs: deps.config.worker.pollMs,
    workerId,
  });
}

export interface Background {
  workerId: string;
  stop(): Promise<void>;
}

/**
 * Everything a process runs in the background, on one runner: transaction processing, webhook
 * delivery, the providers' periodic work, their balance checks, the idempotency sweep, the raising
 * of stuck orders, the completion of finished bulk orders, the deletion of old operational rows and, on
 * partitioned history, next months' partitions. `stop` lets in-flight work finish and gives back leases.
 */
export function startBackground(deps: AppDeps, apiBaseUrl: string, workerId = newWorkerId()): Background {
  const runner = createRunner(deps, {
    queues: [transactionQueue(deps, workerId), webhookDeliveryQueue(deps, workerId)],
    tasks: [
      ...providerWork({ ...deps, apiBaseUrl }),
      providerBalanceTask(deps),
      idempotencySweepTask(deps),
      stuckOrdersTask(deps),
      batchCompletionSweepTask(deps),
      retentionTask(deps),
      { name: "partitions ahead", everyMs: 3600_000, run: () => createPartitionsAhead(deps.db) },
    ],
    pollMs: deps.config.worker.pollMs,
    workerId,
  });
  runner.start();
  return { workerId, stop: () => runner.stop() };
}
