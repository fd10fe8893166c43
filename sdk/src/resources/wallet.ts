import type { CallOptions, IdempotentCallOptions, ListParams } from "../core/options.js";
import { PageList } from "../core/paging.js";
import { idempotencyKey, type Requester } from "../core/requester.js";
import { fundWallet, getWallet, listLedgerEntries, updateWallet } from "../generated/client/sdk.gen.js";
import type {
  FundWalletRequest,
  ListLedgerEntriesData,
  StatementEntry,
  Wallet as WalletResource,
  WalletUpdateRequest,
} from "../generated/client/types.gen.js";

/** The wallet of the key's account and mode. Amounts are kobo. */
export class Wallet {
  constructor(private readonly requester: Requester) {}

  balance(options: CallOptions = {}): Promise<WalletResource> {
    return this.requester.unwrap(getWallet({ ...this.requester.with(options) }));
  }

  /** Funds the test wallet (test keys only; a live key gets `PermissionError` `TEST_MODE_ONLY`). */
  fund(body: FundWalletRequest, options: IdempotentCallOptions = {}) {
    const { idempotencyKey: key, ...call } = options;
    return this.requester.unwrap(
      fundWallet({ ...this.requester.with(call), body, headers: { "Idempotency-Key": idempotencyKey(key) } }),
    );
  }

  /** The ledger, newest entry first, every page. */
  statement(params: ListParams<ListLedgerEntriesData["query"]> = {}, options: CallOptions = {}): PageList<StatementEntry> {
    return new PageList((cursor) =>
      this.requester.unwrap(listLedgerEntries({ ...this.requester.with(options), query: { ...params, cursor } })),
    );
  }

  /** Sets the low-balance alert (`low_balance_threshold_kobo`; `null` turns it off). */
  setAlert(body: WalletUpdateRequest, options: CallOptions = {}): Promise<WalletResource> {
    return this.requester.unwrap(updateWallet({ ...this.requester.with(options), body }));
  }
}
