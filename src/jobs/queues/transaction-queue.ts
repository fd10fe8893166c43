import { workChannel } from "../../db/channels.ts";
import type { Job, Queue } from "../../lib/job-queue.ts";
import { completionBatcher } from "../../orders/completion.ts";
import { counted } from "../../orders/counted.ts";
import { type InterruptedClaims, interruptedClaims } from "../../orders/interrupted-claims.ts";
import { type LeaseKeeper, LeaseLostError, startLeaseKeeper } from "../../orders/leases.ts";
import { type Completer, type ProcessingDeps, processClaimed } from "../../orders/processing.ts";
import { type ClaimedTransaction, claimDueTransactions } from "../../orders/statements/claim-due.ts";
import { releaseLeases } from "../../orders/statements/release-leases.ts";
import { vacuumQueue } from "../../orders/statements/vacuum-queue.ts";
import { isFinal } from "../../orders/states.ts";
import { commissionTable } from "../../providers/commission.ts";
import { tracingOff } from "../../tracing/tracing.ts";

/**
 * Processes one claim under the keeper's heartbeat; `claimedAt` is when its claim was sent. Its span
 * continues the trace of the request that accepted the order. A job the database's failure ended is told
 * to `interrupted`, which gives its order back once the database answers. Never throws.
 */
function processSafely(
  deps: ProcessingDeps,
  leases: LeaseKeeper,
  interrupted: InterruptedClaims,
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
        interrupted.ended(claim);
        span.setAttributes({ "vend.status": result.row.status });
        if (!result.changed && !isFinal(result.row.status))
          deps.logger.warn({ reference: claim.reference }, "lease lost; the job is left to the worker that took it");
      },
      (error) => {
        const databaseFault = interrupted.ended(claim, error);
        span.fail(error instanceof Error ? error.message : String(error));
        if (error instanceof LeaseLostError) {
          deps.logger.warn({ reference: claim.reference }, "lease lost before a provider call; the job is left to its new owner");
          return;
        }
        if (databaseFault) {
          deps.logger.warn(
            { reference: claim.reference, err: error instanceof Error ? error.message : String(error) },
            "processing interrupted by the database; the order is given back once it answers",
          );
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

/** A graceful stop's release: all leases, a few tries while another statement holds some of the rows for a moment. */
async function releaseAll(deps: Pick<ProcessingDeps, "db">, workerId: string): Promise<void> {
  for (let tries = 1; (await releaseLeases(deps.db, workerId)).skipped > 0 && tries < 5; tries++)
    await new Promise((resolve) => setTimeout(resolve, 100));
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
  // Shared by every session of the queue: which claims its jobs run, and whether a fault left others leased.
  const interrupted = interruptedClaims(deps, workerId);
  return {
    name: "transactions",
    channel: workChannel,
    concurrency,
    claimSize: { min: claimMin, max: claimMax },
    open(loop) {
      const leases = startLeaseKeeper({ ...deps, onFailure: (error) => interrupted.failed(error) }, workerId, leaseSeconds);
      const unsubscribe = loop ? interrupted.onDue(loop.wake) : () => {};
      let nextDueMs: number | undefined;
      const vacuum = queueVacuum(deps);
      const run = (claim: ClaimedTransaction, claimedAt: number): Job => {
        interrupted.running(claim);
        return { run: () => processSafely(deps, leases, interrupted, complete, claim, claimedAt) };
      };
      return {
        claim: ({ limit }) =>
          interrupted.exclusive(async (): Promise<Job[]> => {
            await interrupted.releaseDue();
            const claimedAt = performance.now();
            const claimed = await claimDueTransactions(deps.db, workerId, limit, leaseSeconds, commissions).catch(
              (error: unknown) => {
                // Its answer may be what was lost: orders leased to this worker that no job runs.
                interrupted.failed(error);
                throw error;
              },
            );
            nextDueMs = claimed.nextDueMs;
            vacuum.claimed(claimed.length);
            return claimed.map((claim) => run(claim, claimedAt));
          }),
        // While the database fails, or interrupted orders wait to be given back, look again soon.
        nextDueMs: () => {
          const retry = interrupted.retryInMs();
          return retry === undefined ? nextDueMs : Math.min(retry, nextDueMs ?? retry);
        },
        async close({ release }) {
          unsubscribe();
          leases.stop();
          await vacuum.idle();
          if (release) await releaseAll(deps, workerId).catch(() => {});
        },
      };
    },
  };
}
