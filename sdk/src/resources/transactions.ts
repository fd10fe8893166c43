import { type CallOptions, type ListParams, type WaitOptions, waitQuery } from "../core/options.js";
import { PageList } from "../core/paging.js";
import { type Requester, waitingCall } from "../core/requester.js";
import { getTransaction, listTransactions } from "../generated/client/sdk.gen.js";
import type { ListTransactionsData, Transaction, TransactionStatus } from "../generated/client/types.gen.js";

/** `successful` and `failed` are final; `reversed` and `refunded` would be too (nothing sets them today). */
const finalStatuses: readonly TransactionStatus[] = ["successful", "failed", "reversed", "refunded"];

/** Will this status change no more? */
export function isFinal(status: TransactionStatus): boolean {
  return finalStatuses.includes(status);
}

export interface WaitForOptions extends CallOptions {
  /** Give up after this many seconds and return the transaction as it stands (default 60). */
  timeout?: number;
}

/** The longest single long-poll asked for; the server caps `wait` itself too. */
const longestPollSeconds = 25;

export class Transactions {
  constructor(private readonly requester: Requester) {}

  /** One transaction by `reference`; with `wait`, long-polls until it is final or the wait ends. */
  get(reference: string, options: CallOptions & WaitOptions = {}): Promise<Transaction> {
    const { wait, ...call } = options;
    return this.requester.unwrap(
      getTransaction({ ...this.requester.with(waitingCall(call, wait)), path: { reference }, query: waitQuery(wait) }),
    );
  }

  /** The transactions, newest first, every page: `for await (const txn of vend.transactions.list({ status: "failed" }))`. */
  list(params: ListParams<ListTransactionsData["query"]> = {}, options: CallOptions = {}): PageList<Transaction> {
    return new PageList((cursor) =>
      this.requester.unwrap(listTransactions({ ...this.requester.with(options), query: { ...params, cursor } })),
    );
  }

  /**
   * Long-polls until the transaction is final (`isFinal`) or `timeout` seconds have passed, and returns it as it
   * then stands: read `status`.
   */
  async waitFor(reference: string, options: WaitForOptions = {}): Promise<Transaction> {
    const { timeout = 60, ...call } = options;
    const deadline = Date.now() + timeout * 1000;
    for (;;) {
      const started = Date.now();
      const remaining = Math.floor((deadline - started) / 1000);
      const transaction = await this.get(reference, { ...call, wait: Math.max(0, Math.min(remaining, longestPollSeconds)) });
      if (isFinal(transaction.status) || Date.now() >= deadline || remaining <= 0) return transaction;
      // A server that answered at once (its wait capped low) is asked again after a second, not in a tight loop.
      const pause = Math.min(1000 - (Date.now() - started), deadline - Date.now());
      if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
