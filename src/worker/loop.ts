import { hostname } from "node:os";
import type { DbHandle } from "../db/client.ts";
import { deleteExpiredIdempotencyRecords } from "../idempotency/service.ts";
import { randomBase62 } from "../lib/random.ts";
import { isFinal } from "../processing/transitions.ts";
import { sendDueSandboxCallbacks } from "../providers/sandbox/callbacks.ts";
import { type ClaimedTransaction, claimDueTransactions, releaseLeases } from "./claim.ts";
import { type LeaseKeeper, LeaseLostError, startLeaseKeeper } from "./lease.ts";
import { type ProcessingDeps, processClaimed } from "./process-transaction.ts";

/** Channel the API pings when it accepts work, so idle workers start at once. */
export const workChannel = "vend_work";

export interface WorkerDeps extends ProcessingDeps {
  database: DbHandle;
  /** Where this service's API is reachable (sandbox callbacks are posted there). */
  apiBaseUrl: string;
}

export const newWorkerId = () => `${hostname()}:${process.pid}:${randomBase62(6)}`;

/** Processes one claim under the keeper's heartbeat; `claimedAt` is when its claim was sent. */
function processSafely(deps: WorkerDeps, leases: LeaseKeeper, claim: ClaimedTransaction, claimedAt: number): Promise<void> {
  const lease = leases.watch(claim, claimedAt);
  return processClaimed(deps, claim, lease)
    .then(
      (result) => {
        if (!result.changed && !isFinal(result.row.status))
          deps.logger.warn({ reference: claim.reference }, "lease lost; the job is left to the worker that took it");
      },
      (error) => {
        if (error instanceof LeaseLostError) {
          deps.logger.warn({ reference: claim.reference }, "lease lost before a provider call; the job is left to its new owner");
          return;
        }
        // The lease runs out and another pass re-queries the provider, so nothing is lost.
        deps.logger.error(
          { reference: claim.reference, err: error instanceof Error ? error.message : String(error) },
          "processing failed",
        );
      },
    )
    .finally(() => lease.release());
}

/**
 * One pass: claim what is due (up to `limit`), process it concurrently, send due sandbox
 * callbacks. Tests call this directly instead of sleeping for a background loop.
 */
export async function runWorkerTick(deps: WorkerDeps, workerId: string, limit = deps.config.worker.concurrency): Promise<number> {
  const leases = startLeaseKeeper(deps, workerId, deps.config.worker.leaseSeconds);
  try {
    const claimedAt = performance.now();
    const claimed = await claimDueTransactions(deps.db, workerId, limit, deps.config.worker.leaseSeconds);
    await Promise.all(claimed.map((claim) => processSafely(deps, leases, claim, claimedAt)));
    const callbacks = await sendDueSandboxCallbacks(deps, deps.apiBaseUrl);
    return claimed.length + callbacks;
  } finally {
    leases.stop();
  }
}

/**
 * The background loop. It keeps up to `concurrency` transactions in flight, claiming more as
 * slots free up; it wakes when work is announced (LISTEN) or every `pollMs` as the fallback, and
 * sends due sandbox callbacks at most once per poll interval. On abort it stops claiming, lets
 * what is in flight finish, gives back any lease it still holds, and resolves `done`.
 */
export function startWorker(
  deps: WorkerDeps,
  signal: AbortSignal,
  workerId = newWorkerId(),
): { workerId: string; done: Promise<void> } {
  const { concurrency, pollMs, leaseSeconds } = deps.config.worker;
  const inFlight = new Set<Promise<void>>();
  // A nudge that arrives while the loop is busy is remembered, so the next wait returns at once.
  let nudged = false;
  let wake: (() => void) | undefined;
  const nudge = () => {
    nudged = true;
    wake?.();
  };
  signal.addEventListener("abort", nudge);
  const waitForWork = (ms: number) =>
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

  let lastHousekeeping = 0;
  let lastSweep = 0;
  const housekeeping = async () => {
    if (Date.now() - lastHousekeeping < pollMs) return;
    lastHousekeeping = Date.now();
    await sendDueSandboxCallbacks(deps, deps.apiBaseUrl);
    if (Date.now() - lastSweep > 3600_000) {
      lastSweep = Date.now();
      await deleteExpiredIdempotencyRecords(deps.db);
    }
  };

  const done = (async () => {
    const unlisten = await deps.database.listen(workChannel, nudge);
    const leases = startLeaseKeeper(deps, workerId, leaseSeconds);
    try {
      while (!signal.aborted) {
        let claimed: ClaimedTransaction[] = [];
        const claimedAt = performance.now();
        try {
          // Claim in batches (half the slots or more free): one claim query per job would cost more than it saves.
          const free = concurrency - inFlight.size;
          if (free >= Math.max(1, Math.floor(concurrency / 2)))
            claimed = await claimDueTransactions(deps.db, workerId, free, leaseSeconds);
          await housekeeping();
        } catch (error) {
          deps.logger.error({ err: error instanceof Error ? error.message : String(error) }, "worker pass failed");
        }
        for (const claim of claimed) {
          const job: Promise<void> = processSafely(deps, leases, claim, claimedAt).finally(() => {
            inFlight.delete(job);
            nudge();
          });
          inFlight.add(job);
        }
        // Claim again at once while there was work and room; otherwise wait for slots, a nudge or the poll.
        if (claimed.length > 0 && concurrency - inFlight.size >= Math.max(1, Math.floor(concurrency / 2))) continue;
        if (!signal.aborted) await waitForWork(pollMs);
      }
      await Promise.all(inFlight);
    } finally {
      leases.stop();
      await unlisten().catch(() => {});
      await releaseLeases(deps.db, workerId).catch(() => {});
    }
  })();
  return { workerId, done };
}
