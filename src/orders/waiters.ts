import type { DbHandle, Unlisten } from "../db/client.ts";
import type { Executor } from "../db/transaction.ts";
import type { Scope } from "../lib/scope.ts";
import { finalChannel, parseFinalAnnouncements } from "./announcements.ts";
import { getTransactionByReference } from "./lookup.ts";
import type { Transaction } from "./view.ts";

/**
 * Long-poll wake-ups: one LISTEN per process on the finality channel, fanned out to the requests
 * waiting for each reference. Event-driven, no sleep loops.
 */
export class FinalityWaiters {
  private readonly waiting = new Map<string, Set<(final: boolean, transaction?: Transaction) => void>>();
  private listening: Promise<Unlisten> | undefined;
  private drained = false;

  private constructor(private readonly database: DbHandle) {}

  static async start(database: DbHandle): Promise<FinalityWaiters> {
    return new FinalityWaiters(database);
  }

  /** True once the process is shutting down: readiness fails and long-polls answer at once. */
  get draining(): boolean {
    return this.drained;
  }

  /**
   * LISTENs from the first long-poll on: a process that never serves one (a worker) never receives
   * the finality announcements at all.
   */
  ready(): Promise<Unlisten> {
    this.listening ??= this.database
      .listen(finalChannel, (payload) => {
        for (const { reference, transaction } of parseFinalAnnouncements(payload)) this.announce(reference, transaction);
      })
      .catch((error: unknown) => {
        // The database did not answer: the next long-poll tries again rather than failing forever.
        this.listening = undefined;
        throw error;
      });
    return this.listening;
  }

  announce(reference: string, transaction?: Transaction): void {
    const callbacks = this.waiting.get(reference);
    if (!callbacks) return;
    this.waiting.delete(reference);
    for (const callback of callbacks) callback(true, transaction);
  }

  /**
   * Shutdown: every open long-poll answers now, with the transaction as it stands, and later ones do
   * not wait, so the HTTP server can finish its in-flight requests within the grace period.
   */
  drain(): void {
    this.drained = true;
    const all = [...this.waiting.values()];
    this.waiting.clear();
    for (const callbacks of all) for (const callback of callbacks) callback(false);
  }

  /**
   * Resolves when `reference` is announced final (with the final transaction when the announcement
   * carried it), or with `{final: false}` after `ms` or on drain. Subscribe before reading the state.
   */
  subscribe(reference: string, ms: number): { promise: Promise<{ final: boolean; transaction?: Transaction }>; cancel(): void } {
    if (this.drained) return { promise: Promise.resolve({ final: false }), cancel: () => {} };
    let cancel = () => {};
    const promise = new Promise<{ final: boolean; transaction?: Transaction }>((resolve) => {
      const set = this.waiting.get(reference) ?? new Set();
      this.waiting.set(reference, set);
      const timer = setTimeout(() => finish(false), ms);
      const finish = (final: boolean, transaction?: Transaction) => {
        clearTimeout(timer);
        set.delete(finish);
        if (set.size === 0 && this.waiting.get(reference) === set) this.waiting.delete(reference);
        resolve({ final, transaction });
      };
      set.add(finish);
      cancel = () => finish(false);
    });
    return { promise, cancel };
  }

  async stop(): Promise<void> {
    const unlisten = await this.listening?.catch(() => undefined);
    await unlisten?.();
  }
}

/** The settings that bound a long-poll (MAX_WAIT_SECONDS, REQUEST_TIMEOUT_SECONDS). */
export interface WaitLimits {
  maxWaitSeconds: number;
  requestTimeoutSeconds: number;
}

/**
 * How long a request may wait: the asked seconds, capped by MAX_WAIT_SECONDS, and ending at least
 * one second before REQUEST_TIMEOUT_SECONDS counted from when the request arrived.
 */
export function waitBudgetMs(askedSeconds: number, limits: WaitLimits, requestStartedAt: number): number {
  const capped = Math.min(askedSeconds, limits.maxWaitSeconds) * 1000;
  const beforeDeadline = (limits.requestTimeoutSeconds - 1) * 1000 - (performance.now() - requestStartedAt) - 100;
  return Math.max(0, Math.min(capped, beforeDeadline));
}

/** Reads the transaction, and if it is not final waits (within the budget) for it to become so; answers it as it then stands. */
export async function readAfterWait(
  waiters: FinalityWaiters,
  reference: string,
  budgetMs: number,
  read: () => Promise<Transaction>,
): Promise<Transaction> {
  if (budgetMs <= 0 || waiters.draining) return read();
  await waiters.ready();
  const subscription = waiters.subscribe(reference, budgetMs);
  const now = await read().catch((error) => {
    subscription.cancel();
    throw error;
  });
  if (now.status === "successful" || now.status === "failed") {
    subscription.cancel();
    return now;
  }
  const woken = await subscription.promise;
  return woken.transaction ?? read();
}

/** What a long-poll on an order reads with: the database, the process's waiters and the limits of a wait. */
export interface WaitContext {
  db: Executor;
  waiters: FinalityWaiters;
  config: WaitLimits;
}

/** A long-poll on one of the scope's orders: `waitSeconds` asked by a request that arrived at `startedAt`. */
export interface TransactionWait {
  scope: Scope;
  reference: string;
  waitSeconds: number;
  /** `performance.now()` when the request arrived. */
  startedAt: number;
}

/**
 * The scope's transaction (`404` for another scope's), and if it is not final, as it stands once it is or
 * once the wait's budget (`waitBudgetMs`) has run out.
 */
export function getTransactionAfterWait({ ctx, input }: { ctx: WaitContext; input: TransactionWait }): Promise<Transaction> {
  const { scope, reference } = input;
  const read = () => getTransactionByReference(ctx.db, scope, reference);
  const budget = waitBudgetMs(input.waitSeconds, ctx.config, input.startedAt);
  return readAfterWait(ctx.waiters, reference, budget, read);
}
