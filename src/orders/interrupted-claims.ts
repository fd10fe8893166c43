import type { Executor } from "../db/transaction.ts";
import { isDatabaseUnavailable } from "../db/unavailable.ts";
import type { Logger } from "../logger.ts";
import type { ClaimedTransaction } from "./statements/claim-due.ts";
import { leaseKey } from "./statements/extend-leases.ts";
import { releaseLeases } from "./statements/release-leases.ts";

/** How soon a worker looks again while its database fails, or while claims it lost track of are still leased. */
export const interruptedRetryMs = 500;

/**
 * A worker's claims that a database fault left leased with no job running them, and how they are given back.
 *
 * When the database (or the pooler before it) stops answering, a job's next statement fails (its completion,
 * its move to pending) and the job ends, its order still `processing` under this worker's lease; a claim whose
 * answer was lost leases orders no job ever runs. Left alone they wait out the lease. So any statement that
 * fails as "database unavailable" (a job's, a claim's, a heartbeat's) makes a release due: before its next
 * claim, once the database answers, the worker gives back every lease it holds that none of its running jobs
 * holds (`releaseLeases` keeping theirs), and those orders are claimed again at once, by it or another worker.
 * A re-claimed order is never sent again blindly: a claim of a `processing` or `pending` order asks the
 * provider first (`processClaimed`), and every move is guarded on the new claim.
 *
 * Releases and claims run one at a time (`exclusive`), and a claim's orders are `running` before its answer is
 * handed on, so a release never gives back a lease whose job is running or about to run. The release is
 * repeated until one finds nothing left (rows still locked by a transaction of a lost connection are skipped
 * until the server ends it).
 */
export interface InterruptedClaims {
  /** Runs `work` (a release, then a claim) while no other does. */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** Marks a claim as run by a job of this worker (from its claim's answer on) until `ended`. */
  running(claim: ClaimedTransaction): void;
  /** Its job has ended, by `error` if it failed: true when that was the database not answering (a release is due). */
  ended(claim: ClaimedTransaction, error?: unknown): boolean;
  /** Judges a failed statement: true when the database did not answer, and a release is then due. */
  failed(error: unknown): boolean;
  /** While a release is due: in how many ms to look again; undefined otherwise. */
  retryInMs(): number | undefined;
  /** Gives back the leases no running job holds, when a release is due. Throws while the database does not answer. */
  releaseDue(): Promise<void>;
  /** `wake` is called when a release becomes due (so a sleeping loop claims sooner); returns the unsubscribe. */
  onDue(wake: () => void): () => void;
}

export function interruptedClaims(deps: { db: Executor; logger: Logger }, workerId: string): InterruptedClaims {
  const jobs = new Map<string, ClaimedTransaction>();
  const wakes = new Set<() => void>();
  let due = false;
  /** Failures seen so far: one during a release keeps the next one due, whatever the release found. */
  let failures = 0;
  let notBefore = 0;
  let tail: Promise<unknown> = Promise.resolve();

  function failed(error: unknown): boolean {
    if (!isDatabaseUnavailable(error)) return false;
    const wasDue = due;
    due = true;
    failures += 1;
    notBefore = 0;
    if (!wasDue) for (const wake of wakes) wake();
    return true;
  }

  return {
    exclusive(work) {
      const turn = tail.then(work, work);
      tail = turn.catch(() => {});
      return turn;
    },
    running(claim) {
      jobs.set(leaseKey(claim.id, claim.attempts), claim);
    },
    ended(claim, error) {
      // Before the failure is judged: the release that failure calls for must not keep this claim's lease.
      jobs.delete(leaseKey(claim.id, claim.attempts));
      return error !== undefined && failed(error);
    },
    failed,
    retryInMs: () => (due ? interruptedRetryMs : undefined),
    async releaseDue() {
      if (!due || performance.now() < notBefore) return;
      const failuresBefore = failures;
      try {
        const { released, skipped } = await releaseLeases(deps.db, workerId, [...jobs.values()]);
        if (released > 0 || skipped > 0)
          deps.logger.warn({ released, skipped }, "orders whose processing a database fault interrupted given back");
        // Done once a release finds nothing: one that gave some back looks once more for stragglers.
        due = released > 0 || skipped > 0 || failures !== failuresBefore;
        if (skipped > 0) notBefore = performance.now() + interruptedRetryMs;
      } catch (error) {
        if (isDatabaseUnavailable(error)) throw error;
        due = failures !== failuresBefore;
        deps.logger.error(
          { err: error instanceof Error ? error.message : String(error) },
          "could not give back interrupted orders; their leases run out",
        );
      }
    },
    onDue(wake) {
      wakes.add(wake);
      return () => wakes.delete(wake);
    },
  };
}
