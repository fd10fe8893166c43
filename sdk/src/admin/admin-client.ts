import { followStream, type StreamOptions } from "../core/event-stream.js";
import type { CallOptions, IdempotentCallOptions, ListParams } from "../core/options.js";
import { PageList } from "../core/paging.js";
import { type ConnectionOptions, idempotencyKey, Requester } from "../core/requester.js";
import * as api from "../generated/admin/sdk.gen.js";
import type * as types from "../generated/admin/types.gen.js";

export interface VendAdminOptions extends ConnectionOptions {
  /** An operator's token (`op_…`) or the service's `ADMIN_TOKEN`. */
  token: string;
}

class Accounts {
  constructor(private readonly requester: Requester) {}
  /** Creates an account; the answer holds its test and live keys, shown only here. */
  create(body: types.AccountCreateRequest, options: CallOptions = {}) {
    return this.requester.unwrap(api.createAccount({ ...this.requester.with(options), body }));
  }
  list(params: ListParams<types.ListAccountsData["query"]> = {}, options: CallOptions = {}): PageList<types.Account> {
    return new PageList((cursor) =>
      this.requester.unwrap(api.listAccounts({ ...this.requester.with(options), query: { ...params, cursor } })),
    );
  }
  get(accountId: string, options: CallOptions = {}) {
    return this.requester.unwrap(api.getAccount({ ...this.requester.with(options), path: { account_id: accountId } }));
  }
  /** Moves the account to a price plan; its next orders are priced by it. */
  setPricePlan(accountId: string, body: types.AccountPricePlanRequest, options: CallOptions = {}) {
    return this.requester.unwrap(
      api.setAccountPricePlan({ ...this.requester.with(options), path: { account_id: accountId }, body }),
    );
  }
}

class PricePlans {
  constructor(private readonly requester: Requester) {}
  /** Every price plan with its discounts and account count. */
  list(options: CallOptions = {}) {
    return this.requester.unwrap(api.listPricePlans({ ...this.requester.with(options) }));
  }
  create(body: types.PricePlanCreateRequest, options: CallOptions = {}) {
    return this.requester.unwrap(api.createPricePlan({ ...this.requester.with(options), body }));
  }
  /** Changes a plan's description, or replaces its whole list of discounts. */
  update(name: string, body: types.PricePlanUpdateRequest, options: CallOptions = {}) {
    return this.requester.unwrap(api.updatePricePlan({ ...this.requester.with(options), path: { name }, body }));
  }
}

class ApiKeys {
  constructor(private readonly requester: Requester) {}
  /** A new key for the account; the key is shown only in this answer. */
  create(accountId: string, body: types.ApiKeyCreateRequest, options: CallOptions = {}) {
    return this.requester.unwrap(api.createApiKey({ ...this.requester.with(options), path: { account_id: accountId }, body }));
  }
  list(accountId: string, options: CallOptions = {}) {
    return this.requester.unwrap(api.listApiKeys({ ...this.requester.with(options), path: { account_id: accountId } }));
  }
  revoke(keyId: string, options: CallOptions = {}) {
    return this.requester.unwrap(api.revokeApiKey({ ...this.requester.with(options), path: { key_id: keyId } }));
  }
}

class Wallets {
  constructor(private readonly requester: Requester) {}
  /** Credits an account's wallet in either mode, with a note; idempotent like a vend. */
  credit(accountId: string, body: types.WalletCreditRequest, options: IdempotentCallOptions = {}) {
    const { idempotencyKey: key, ...call } = options;
    return this.requester.unwrap(
      api.creditWallet({
        ...this.requester.with(call),
        path: { account_id: accountId },
        body,
        headers: { "Idempotency-Key": idempotencyKey(key) },
      }),
    );
  }
  /** Compares every wallet with its ledger. */
  reconcile(query: types.ReconcileWalletsData["query"] = {}, options: CallOptions = {}) {
    return this.requester.unwrap(api.reconcileWallets({ ...this.requester.with(options), query }));
  }
}

class AdminTransactions {
  constructor(private readonly requester: Requester) {}
  /** Searches transactions across accounts, every page. */
  list(
    params: ListParams<types.AdminListTransactionsData["query"]> = {},
    options: CallOptions = {},
  ): PageList<types.AdminTransaction> {
    return new PageList((cursor) =>
      this.requester.unwrap(api.adminListTransactions({ ...this.requester.with(options), query: { ...params, cursor } })),
    );
  }
  get(reference: string, options: CallOptions = {}) {
    return this.requester.unwrap(api.adminGetTransaction({ ...this.requester.with(options), path: { reference } }));
  }
  /** Asks the provider for the transaction's state now. */
  requery(reference: string, options: CallOptions = {}) {
    return this.requester.unwrap(api.requeryTransaction({ ...this.requester.with(options), path: { reference } }));
  }
  /** Settles a stuck transaction by hand. */
  resolve(reference: string, body: types.ResolveTransactionRequest, options: CallOptions = {}) {
    return this.requester.unwrap(api.resolveTransaction({ ...this.requester.with(options), path: { reference }, body }));
  }
  /** The settlement report of one provider and day. */
  settlement(query: types.SettlementReportData["query"], options: CallOptions = {}) {
    return this.requester.unwrap(api.settlementReport({ ...this.requester.with(options), query }));
  }
  /** Successful orders' face value, price, provider cost and margin over Lagos days, by provider, service, network, account or day. */
  margin(query: types.MarginReportData["query"], options: CallOptions = {}) {
    return this.requester.unwrap(api.marginReport({ ...this.requester.with(options), query }));
  }
  /** Anomalies found between orders and providers, every page. */
  anomalies(params: ListParams<types.ListAnomaliesData["query"]> = {}, options: CallOptions = {}): PageList<types.Anomaly> {
    return new PageList((cursor) =>
      this.requester.unwrap(api.listAnomalies({ ...this.requester.with(options), query: { ...params, cursor } })),
    );
  }
}

class Callbacks {
  constructor(private readonly requester: Requester) {}
  list(params: ListParams<types.ListCallbacksData["query"]> = {}, options: CallOptions = {}): PageList<types.StoredCallback> {
    return new PageList((cursor) =>
      this.requester.unwrap(api.listCallbacks({ ...this.requester.with(options), query: { ...params, cursor } })),
    );
  }
  replay(id: string, options: CallOptions = {}) {
    return this.requester.unwrap(api.replayCallback({ ...this.requester.with(options), path: { id } }));
  }
}

class Providers {
  constructor(private readonly requester: Requester) {}
  list(options: CallOptions = {}) {
    return this.requester.unwrap(api.listProviders({ ...this.requester.with(options) }));
  }
  disable(name: string, body: types.ProviderDisableRequest, options: CallOptions = {}) {
    return this.requester.unwrap(api.disableProvider({ ...this.requester.with(options), path: { name }, body }));
  }
  enable(name: string, options: CallOptions = {}) {
    return this.requester.unwrap(api.enableProvider({ ...this.requester.with(options), path: { name } }));
  }
  stats(name: string, options: CallOptions = {}) {
    return this.requester.unwrap(api.getProviderStats({ ...this.requester.with(options), path: { name } }));
  }
  /** The differences between the provider's plan list and the catalogue (a dry run: nothing changes). */
  catalogueSync(name: string, options: CallOptions = {}) {
    return this.requester.unwrap(api.getCatalogueSync({ ...this.requester.with(options), path: { name } }));
  }
  /** Applies those differences; with the dry run's `fingerprint`, refused (409) if they changed since. */
  applyCatalogueSync(name: string, body: types.CatalogueSyncApplyRequest = {}, options: CallOptions = {}) {
    return this.requester.unwrap(api.applyCatalogueSync({ ...this.requester.with(options), path: { name }, body }));
  }
  /** Live figures (what `vendctl top` shows); `since`: the previous snapshot's `generated_at`, for exact rates. */
  snapshot(query: types.GetOperationsSnapshotData["query"] = {}, options: CallOptions = {}) {
    return this.requester.unwrap(api.getOperationsSnapshot({ ...this.requester.with(options), query }));
  }
  /** Records money put on the provider's float (audited); a retry with the same key records it once. */
  recordFloatTopup(name: string, body: types.FloatTopupRequest, options: IdempotentCallOptions = {}) {
    const { idempotencyKey: key, ...call } = options;
    return this.requester.unwrap(
      api.recordFloatTopup({
        ...this.requester.with(call),
        path: { name },
        body,
        headers: { "Idempotency-Key": idempotencyKey(key) },
      }),
    );
  }
  /** The provider's recorded float top-ups, every page. */
  floatTopups(
    name: string,
    params: ListParams<types.ListFloatTopupsData["query"]> = {},
    options: CallOptions = {},
  ): PageList<types.FloatTopup> {
    return new PageList((cursor) =>
      this.requester.unwrap(
        api.listFloatTopups({ ...this.requester.with(options), path: { name }, query: { ...params, cursor } }),
      ),
    );
  }
  /** The provider's float walked sample by sample against top-ups, costs and reversals. */
  floatReconciliation(name: string, query: types.FloatReconciliationData["query"], options: CallOptions = {}) {
    return this.requester.unwrap(api.floatReconciliation({ ...this.requester.with(options), path: { name }, query }));
  }
  /** Changes a product's price, discount or availability. */
  updateProduct(code: string, body: types.ProductUpdateRequest, options: CallOptions = {}) {
    return this.requester.unwrap(api.updateProduct({ ...this.requester.with(options), path: { code }, body }));
  }
}

class Operators {
  constructor(private readonly requester: Requester) {}
  list(params: ListParams<types.ListOperatorsData["query"]> = {}, options: CallOptions = {}): PageList<types.Operator> {
    return new PageList((cursor) =>
      this.requester.unwrap(api.listOperators({ ...this.requester.with(options), query: { ...params, cursor } })),
    );
  }
  /** Creates an operator; its token is shown only in this answer. */
  create(body: types.OperatorCreateRequest, options: CallOptions = {}) {
    return this.requester.unwrap(api.createOperator({ ...this.requester.with(options), body }));
  }
  /** The operator this token belongs to. */
  me(options: CallOptions = {}) {
    return this.requester.unwrap(api.getCurrentOperator({ ...this.requester.with(options) }));
  }
  revoke(operatorId: string, options: CallOptions = {}) {
    return this.requester.unwrap(api.revokeOperator({ ...this.requester.with(options), path: { operator_id: operatorId } }));
  }
  /** The audit trail, every page. */
  audit(params: ListParams<types.ListAuditEntriesData["query"]> = {}, options: CallOptions = {}): PageList<types.AuditEntry> {
    return new PageList((cursor) =>
      this.requester.unwrap(api.listAuditEntries({ ...this.requester.with(options), query: { ...params, cursor } })),
    );
  }
}

/** Every account's requests and answers (the client API, the callbacks and the admin API), kept 7 days by default. */
class AdminRequestLogs {
  constructor(private readonly requester: Requester) {}
  /** The requests, newest first, every page (no bodies); filter by `account_id`, `key_id`, `mode`, `operator`, `status`… */
  list(params: ListParams<types.AdminListRequestLogsData["query"]> = {}, options: CallOptions = {}): PageList<types.RequestLog> {
    return new PageList((cursor) =>
      this.requester.unwrap(api.adminListRequestLogs({ ...this.requester.with(options), query: { ...params, cursor } })),
    );
  }
  /** Any account's request by its `X-Request-Id`, with the body sent and the body answered. */
  retrieve(requestId: string, options: CallOptions = {}): Promise<types.RequestLogDetail> {
    return this.requester.unwrap(api.adminGetRequestLog({ ...this.requester.with(options), path: { request_id: requestId } }));
  }
  /** The requests as they are recorded, until `signal` aborts; reconnects and resumes by itself (see `VendClient`'s). */
  stream(
    params: types.AdminStreamRequestLogsData["query"] = {},
    options: StreamOptions = {},
  ): AsyncGenerator<types.RequestLog, void, undefined> {
    return followStream<types.RequestLog>(
      this.requester,
      (connection) => api.adminStreamRequestLogs({ ...connection, query: params }),
      options,
    );
  }
}

/** The operator API (`/admin/v1`): `new VendAdmin({ token, baseUrl })`. */
export class VendAdmin {
  readonly accounts: Accounts;
  readonly keys: ApiKeys;
  readonly wallets: Wallets;
  readonly transactions: AdminTransactions;
  readonly callbacks: Callbacks;
  readonly providers: Providers;
  readonly operators: Operators;
  readonly pricePlans: PricePlans;
  readonly requestLogs: AdminRequestLogs;

  constructor(options: VendAdminOptions) {
    if (typeof options?.token !== "string" || options.token === "") throw new TypeError("token is required");
    const requester = new Requester(options, options.token);
    this.accounts = new Accounts(requester);
    this.keys = new ApiKeys(requester);
    this.wallets = new Wallets(requester);
    this.transactions = new AdminTransactions(requester);
    this.callbacks = new Callbacks(requester);
    this.providers = new Providers(requester);
    this.operators = new Operators(requester);
    this.pricePlans = new PricePlans(requester);
    this.requestLogs = new AdminRequestLogs(requester);
  }
}
