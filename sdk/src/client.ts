import { type ConnectionOptions, Requester } from "./core/requester.js";
import { Batches } from "./resources/batches.js";
import { Catalogue } from "./resources/catalogue.js";
import { Keys } from "./resources/keys.js";
import { RequestLogs } from "./resources/request-logs.js";
import { Transactions } from "./resources/transactions.js";
import { Vends } from "./resources/vends.js";
import { Verification } from "./resources/verification.js";
import { Wallet } from "./resources/wallet.js";
import { Events, Webhooks } from "./resources/webhooks.js";

export interface VendClientOptions extends ConnectionOptions {
  /** An API key: `rg_test_…` (sandbox, test wallet) or `rg_live_…`. */
  apiKey: string;
}

const keyModes = /^rg_(test|live)_/;

/** The Vend API for an API key: `new VendClient({ apiKey, baseUrl })`. */
export class VendClient {
  /** The key's mode: `test` keys vend through the sandbox from the test wallet. */
  readonly mode: "live" | "test";
  readonly vends: Vends;
  readonly batches: Batches;
  readonly verification: Verification;
  readonly transactions: Transactions;
  readonly catalogue: Catalogue;
  readonly wallet: Wallet;
  readonly webhooks: Webhooks;
  readonly events: Events;
  readonly keys: Keys;
  /** The key's own requests and answers: `retrieve(error.requestId)` shows what was sent and answered. */
  readonly requestLogs: RequestLogs;

  constructor(options: VendClientOptions) {
    if (typeof options?.apiKey !== "string" || options.apiKey === "") throw new TypeError("apiKey is required");
    const mode = keyModes.exec(options.apiKey)?.[1];
    if (mode !== "test" && mode !== "live") throw new TypeError("apiKey is not a Vend API key (rg_test_… or rg_live_…)");
    this.mode = mode;
    const requester = new Requester(options, options.apiKey);
    this.vends = new Vends(requester);
    this.batches = new Batches(requester);
    this.verification = new Verification(requester);
    this.transactions = new Transactions(requester);
    this.catalogue = new Catalogue(requester);
    this.wallet = new Wallet(requester);
    this.webhooks = new Webhooks(requester);
    this.events = new Events(requester);
    this.keys = new Keys(requester);
    this.requestLogs = new RequestLogs(requester);
  }
}
