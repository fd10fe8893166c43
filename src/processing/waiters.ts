import type { DbHandle, Unlisten } from "../db/client.ts";
import { finalChannel } from "./transitions.ts";

/**
 * Long-poll wake-ups: one LISTEN per process on the finality channel, fanned out to the requests
 * waiting for each reference. Event-driven, no sleep loops.
 */
export class FinalityWaiters {
  private readonly waiting = new Map<string, Set<() => void>>();
  private unlisten: Unlisten | undefined;

  static async start(database: DbHandle): Promise<FinalityWaiters> {
    const waiters = new FinalityWaiters();
    waiters.unlisten = await database.listen(finalChannel, (reference) => waiters.announce(reference));
    return waiters;
  }

  announce(reference: string): void {
    const callbacks = this.waiting.get(reference);
    if (!callbacks) return;
    this.waiting.delete(reference);
    for (const callback of callbacks) callback();
  }

  /** Resolves true when `reference` is announced final, false after `ms`. Subscribe before reading the state. */
  subscribe(reference: string, ms: number): { promise: Promise<boolean>; cancel(): void } {
    let cancel = () => {};
    const promise = new Promise<boolean>((resolve) => {
      const set = this.waiting.get(reference) ?? new Set();
      this.waiting.set(reference, set);
      const timer = setTimeout(() => finish(false), ms);
      const onFinal = () => finish(true);
      const finish = (final: boolean) => {
        clearTimeout(timer);
        set.delete(onFinal);
        if (set.size === 0 && this.waiting.get(reference) === set) this.waiting.delete(reference);
        resolve(final);
      };
      set.add(onFinal);
      cancel = () => finish(false);
    });
    return { promise, cancel };
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
  }
}

/**
 * How long a request may wait: the asked seconds, capped by MAX_WAIT_SECONDS, and ending at least
 * one second before REQUEST_TIMEOUT_SECONDS counted from when the request arrived.
 */
export function waitBudgetMs(
  askedSeconds: number,
  limits: { maxWaitSeconds: number; requestTimeoutSeconds: number },
  requestStartedAt: number,
): number {
  const capped = Math.min(askedSeconds, limits.maxWaitSeconds) * 1000;
  const beforeDeadline = (limits.requestTimeoutSeconds - 1) * 1000 - (performance.now() - requestStartedAt) - 100;
  return Math.max(0, Math.min(capped, beforeDeadline));
}

/** Reads the transaction, and if it is not final waits (within the budget) for it to become so; answers it as it then stands. */
export async function readAfterWait<T extends { status: string }>(
  waiters: FinalityWaiters,
  reference: string,
  budgetMs: number,
  read: () => Promise<T>,
): Promise<T> {
  if (budgetMs <= 0) return read();
  const subscription = waiters.subscribe(reference, budgetMs);
  const now = await read().catch((error) => {
    subscription.cancel();
    throw error;
  });
  if (now.status === "successful" || now.status === "failed") {
    subscription.cancel();
    return now;
  }
  await subscription.promise;
  return read();
}
