import { hostname } from "node:os";
import type { DbHandle } from "../db/client.ts";
import { deleteExpiredIdempotencyRecords } from "../idempotency/service.ts";
import { randomBase62 } from "../lib/random.ts";
import { claimDueTransactions, releaseLeases } from "./claim.ts";
import { type ProcessingDeps, processClaimed } from "./process-transaction.ts";
import { sendDueSandboxCallbacks } from "./sandbox-callbacks.ts";

/** Channel the API pings when it accepts work, so idle workers start at once. */
export const workChannel = "vend_work";

export interface WorkerDeps extends ProcessingDeps {
  database: DbHandle;
  /** Where this service's API is reachable (sandbox callbacks are posted there). */
  apiBaseUrl: string;
}

export const newWorkerId = () => `${hostname()}:${process.pid}:${randomBase62(6)}`;

/**
 * One pass: claim what is due (up to `limit`), process it concurrently, send due sandbox
 * callbacks. Tests call this directly instead of sleeping for a background loop.
 */
export async function runWorkerTick(deps: WorkerDeps, workerId: string, limit = deps.config.worker.concurrency): Promise<number> {
  const claimed = await claimDueTransactions(deps.db, workerId, limit, deps.config.worker.leaseSeconds);
  await Promise.all(
    claimed.map((claim) =>
      processClaimed(deps, claim).catch((error) => {
        deps.logger.error(
          { reference: claim.reference, err: error instanceof Error ? error.message : String(error) },
          "processing failed",
        );
      }),
    ),
  );
  const callbacks = await sendDueSandboxCallbacks(deps, deps.apiBaseUrl);
  return claimed.length + callbacks;
}

/**
 * The background loop: a tick whenever work is announced (LISTEN) or every `pollMs` as the
 * fallback. On abort it finishes the tick in flight, gives back any lease it still holds, and
 * resolves `done`.
 */
export function startWorker(
  deps: WorkerDeps,
  signal: AbortSignal,
  workerId = newWorkerId(),
): { workerId: string; done: Promise<void> } {
  // A nudge that arrives mid-tick is remembered, so the next sleep returns at once.
  let nudged = false;
  let wake: (() => void) | undefined;
  const nudge = () => {
    nudged = true;
    wake?.();
  };
  signal.addEventListener("abort", nudge);
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (nudged) return resolve();
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => {
      nudged = false;
      wake = undefined;
    });
  let lastSweep = 0;
  const done = (async () => {
    const unlisten = await deps.database.listen(workChannel, nudge);
    try {
      while (!signal.aborted) {
        let worked = 0;
        nudged = false;
        try {
          worked = await runWorkerTick(deps, workerId);
          if (Date.now() - lastSweep > 3600_000) {
            lastSweep = Date.now();
            await deleteExpiredIdempotencyRecords(deps.db);
          }
        } catch (error) {
          deps.logger.error({ err: error instanceof Error ? error.message : String(error) }, "worker tick failed");
        }
        if (worked === 0 && !signal.aborted) await sleep(deps.config.worker.pollMs);
      }
    } finally {
      await unlisten().catch(() => {});
      await releaseLeases(deps.db, workerId).catch(() => {});
    }
  })();
  return { workerId, done };
}
