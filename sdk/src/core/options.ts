import type { CallOptions } from "./transport.js";

export type { CallOptions };

/** Options of a call that moves money: a vend, a batch, a funding. */
export interface IdempotentCallOptions extends CallOptions {
  /**
   * The `Idempotency-Key` (at most 128 characters). Default: a new UUID per call, reused by its retries. Give your
   * own (stored with your order) to retry the same purchase later without charging twice.
   */
  idempotencyKey?: string;
}

/** Options of a call that can long-poll for a final state. */
export interface WaitOptions {
  /** Long-poll up to this many seconds (the server caps it, 25 by default) for a final state. */
  wait?: number;
}

/** The query of a paged list without its cursor: the SDK follows cursors itself. */
export type ListParams<Query> = Omit<NonNullable<Query>, "cursor">;

/** `wait` as a query, or none. */
export function waitQuery(wait: number | undefined): { wait: number } | undefined {
  return wait === undefined ? undefined : { wait };
}
