import { completionBatcher } from "../../orders/completion.ts";
import { counted } from "../../orders/counted.ts";
import { type LeaseKeeper, LeaseLostError, startLeaseKeeper } from "../../orders/leases.ts";
import { type Completer, type ProcessingDeps, processClaimed } from "../../orders/processing.ts";
import { type ClaimedTransaction, claimDueTransactions } from "../../orders/statements/claim-due.ts";
import { releaseLeases } from "../../orders/statements/release-leases.ts";
import { vacuumQueue } from "../../orders/statements/vacuum-queue.ts";
import { isFinal } from "../../orders/states.ts";
import { commissionTable } from "../../providers/commission.ts";
import { tracingOff } from "../../tracing/tracing.ts";
import { workChannel } from "../channels.ts";
import type { Job, Queue } from "../queue.ts";

/**
 * Processes one claim under the keeper's heartbeat; `claimedAt` is when its claim was sent. Its span
 * continues the trace of the request that accepted the order. Never throws.
 */
function processSafely(
  deps: ProcessingDeps,
  leases: LeaseKeeper,
  complete: Completer,
  claim: ClaimedTransaction,
  claimedAt: number,
): Promise<void> {
  const lease = leases.watch(claim, claimedAt);
  const span = (deps.tracing ?? tracingOff).startSpan("process transaction", {
    parent: claim.row.traceContext,
    attributes: { "vend.reference": claim.reference, "vend.provider": claim.row.provider, "vend.attempt": claim.attempts },
  });
  return span
    .run(() => processClaimed(deps, claim, lease, complete))
    .then(
      (result) => {
        span.setAttributes({ "vend.status": result.row.status });
        if (!result.changed && !isFinal(result.row.status))
          deps.logger.warn({ reference: claim.reference }, "lease lost; the job is left to the worker that took it");
      },
      (error) => {
        span.fail(error instanceof Error ? error.message : String(error));
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
    .finally(() => {
      lease.release();
      span.end();
    });
}

/** Orders claimed by this process between two vacuums of the work queue (see `vacuumQueue`). */
const claimsPerVacuum = 2000;

/**
 * Vacuums the work queue after every `claimsPerVacuum` orders this process claimed, in the background (one
 * at a time; claims go on meanwhile), so the dead entries a claim may walk stay bounded by the work done
 * since the last vacuum rather than growing with history. An idle worker never vacuums. A vacuum refused
 * because the service's role does not own the table is logged once and not tried again.
 */
function queueVacuum(deps: Pick<ProcessingDeps, "db" | "logger">) {
  let since = 0;
  let running: Promise<void> | undefined;
  let refused = false;
  return {
    claimed(count: number) {
      since += count;
      if (since < claimsPerVacuum || running || refused) return;
      since = 0;
      running = vacuumQueue(deps.db)
        .catch((error: unknown) => {
          // Not the table's owner: it never will be. Anything else (an outage) may pass; the next one tries again.
          refused = (error as { code?: string }).code === "42501";
          deps.logger.warn(
            { err: error instanceof Error ? error.message : String(error) },
            refused ? "may not vacuum the work queue; left to autovacuum" : "could not vacuum the work queue",
          );
        })
        .finally(() => {
          running = undefined;
        });
    },
    idle: () => running ?? Promise.resolve(),
  };
}

/**
 * Transactions to vend or re-query, leased to `workerId`. Claims come in batches whose size adapts
 * (`WORKER_CLAIM_MIN`..`WORKER_CLAIM_MAX`: growing under a backlog, shrinking when work trickles in),
 * and the completions of all its jobs are group-committed. While a session
 * is open its lease keeper heart-beats the leases of the jobs in flight; at a graceful stop the
 * leases still held are given back.
 */
export function transactionQueue(deps: ProcessingDeps, workerId: string): Queue {
  const { concurrency, claimMin, claimMax, leaseSeconds } = deps.config.worker;
  // One per process: the completions of all its jobs are group-committed together.
  const batcher = completionBatcher(deps.db, deps.tracing);
  const commissions = commissionTable(deps.config.routing);
  const complete: Completer = async (request) => counted(deps.metrics, await batcher(request));
  return {
    name: "transactions",
    channel: workChannel,
    concurrency,
    claimSize: { min: claimMin, max: claimMax },
    open() {
      const leases = startLeaseKeeper(deps, workerId, leaseSeconds);
      let nextDueMs: number | undefined;
      const vacuum = queueVacuum(deps);
      return {
        async claim({ limit }): Promise<Job[]> {
          const claimedAt = performance.now();
          const claimed = await claimDueTransactions(deps.db, workerId, limit, leaseSeconds, commissions);
          nextDueMs = claimed.nextDueMs;
          vacuum.claimed(claimed.length);
          return claimed.map((claim) => ({ run: () => processSafely(deps, leases, complete, claim, claimedAt) }));
        },
        nextDueMs: () => nextDueMs,
        async close({ release }) {
          leases.stop();
          await vacuum.idle();
          if (release) await releaseLeases(deps.db, workerId).catch(() => {});
        },
      };
    },
  };
}
