import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import { deleteExpiredIdempotencyRecords } from "../idempotency/service.ts";
import type { Task } from "../jobs/queue.ts";
import type { Logger } from "../logger.ts";
import { sendDueSandboxCallbacks } from "./sandbox-callbacks.ts";

/** The sandbox provider's callbacks that are due, posted to this service's API once per poll interval. */
export function sandboxCallbackTask(
  deps: { db: Database; config: Config; logger: Logger },
  apiBaseUrl: string,
  everyMs = deps.config.worker.pollMs,
): Task {
  return { name: "sandbox callbacks", everyMs, run: () => sendDueSandboxCallbacks(deps, apiBaseUrl) };
}

/** Idempotency records past their lifetime, deleted at start and hourly. */
export function idempotencySweepTask(deps: { db: Database }): Task {
  return { name: "idempotency sweep", everyMs: 3600_000, run: () => deleteExpiredIdempotencyRecords(deps.db) };
}
