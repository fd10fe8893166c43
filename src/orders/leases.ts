import type { Executor } from "../db/transaction.ts";
import type { Logger } from "../logger.ts";
import type { ClaimedTransaction } from "./statements/claim-due.ts";
import { extendLeases, leaseKey } from "./statements/extend-leases.ts";

/** The job's lease is gone (taken over, or run out unrenewed): it must make no further provider call. */
export class LeaseLostError extends Error {
  constructor(readonly reference: string) {
    super(`lease on ${reference} lost; another worker may have the job`);
  }
}

/** A running job's view of its lease. */
export interface LeaseWatch {
  /** Throws LeaseLostError when a heartbeat found the lease taken or it ran out before it could be renewed. */
  assertHeld(): void;
}

export interface HeldLease extends LeaseWatch {
  /** Stops heart-beating it (the job is over). */
  release(): void;
}

export interface LeaseKeeper {
  /** Heart-beats a claim's lease until released; `claimedAt` is `performance.now()` taken before the claim was sent. */
  watch(claim: ClaimedTransaction, claimedAt: number): HeldLease;
  /** One heartbeat now (the timer calls it every third of the lease). */
  beat(): Promise<void>;
  stop(): void;
}

interface Held {
  claim: ClaimedTransaction;
  lost: boolean;
  /** Until when the lease surely lasts, on this process's clock (measured from before the statement that set it). */
  validUntil: number;
}

/** A lease that is never checked beyond the guarded updates (a job run by hand, e.g. in a test). */
export const unwatchedLease: LeaseWatch = { assertHeld() {} };

/** How soon a heartbeat that failed is tried again, so the leases are renewed as soon as the database answers. */
const heartbeatRetryMs = 1000;

/**
 * Keeps one worker's leases alive while its jobs run: every third of the lease, ONE statement
 * extends the leases of all jobs in flight. A job whose lease the heartbeat finds taken over, or
 * whose lease ran out because heartbeats could not get through, is told so before its next
 * provider call; its completion is refused by the guarded updates in any case. A heartbeat that
 * failed is tried again within a second, and told to `onFailure` (the database may be gone).
 */
export function startLeaseKeeper(
  deps: { db: Executor; logger: Logger; onFailure?: (error: unknown) => void },
  workerId: string,
  leaseSeconds: number,
): LeaseKeeper {
  const leaseMs = leaseSeconds * 1000;
  const held = new Map<string, Held>();
  let beating: Promise<void> | undefined;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;

  async function extend(): Promise<void> {
    const batch = [...held.values()].filter((h) => !h.lost);
    if (batch.length === 0) return;
    const sentAt = performance.now();
    try {
      const kept = await extendLeases(
        deps.db,
        workerId,
        batch.map((h) => h.claim),
        leaseSeconds,
      );
      for (const h of batch) {
        if (kept.has(leaseKey(h.claim.id, h.claim.attempts))) h.validUntil = sentAt + leaseMs;
        else h.lost = true;
      }
    } catch (error) {
      // The leases run on; a job whose lease runs out before the next beat gets through stops (validUntil).
      deps.logger.warn({ err: error instanceof Error ? error.message : String(error) }, "lease heartbeat failed");
      deps.onFailure?.(error);
      if (!stopped)
        retry ??= setTimeout(
          () => {
            retry = undefined;
            void beat();
          },
          Math.min(heartbeatRetryMs, leaseMs / 3),
        );
    }
  }

  const beat = () => {
    beating ??= extend().finally(() => {
      beating = undefined;
    });
    return beating;
  };
  const timer = setInterval(() => void beat(), Math.max(50, Math.floor(leaseMs / 3)));

  return {
    watch(claim, claimedAt) {
      const key = leaseKey(claim.id, claim.attempts);
      const entry: Held = { claim, lost: false, validUntil: claimedAt + leaseMs };
      held.set(key, entry);
      return {
        assertHeld() {
          if (entry.lost || performance.now() >= entry.validUntil) throw new LeaseLostError(claim.reference);
        },
        release() {
          held.delete(key);
        },
      };
    },
    beat,
    stop() {
      stopped = true;
      clearInterval(timer);
      clearTimeout(retry);
      held.clear();
    },
  };
}
