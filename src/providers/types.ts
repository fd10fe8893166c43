import type { FailureCode, ServiceCode } from "../../generated/constants.ts";
import type { components } from "../../generated/openapi-types.ts";
import type { EnvReader, ProviderCallBound } from "../config.ts";
import type { Database } from "../db/client.ts";
import type { Queue, Task } from "../lib/job-queue.ts";
import type { Mode } from "../lib/scope.ts";
import type { Logger } from "../logger.ts";

/**
 * What a provider needs to carry out one vend. `reference` is the request id sent to THIS provider: the
 * transaction's reference for the first provider it went to, its own id for each provider it moved on to.
 */
export interface ProviderOrder {
  reference: string;
  mode: Mode;
  service: ServiceCode;
  network: string;
  productCode: string;
  /** Phone number, meter number or smartcard number (unmasked). */
  destination: string;
  amountKobo: number;
  /** Data bundles: the bundle size. */
  requestedMb?: number;
  /** Electricity. */
  meterType?: "prepaid" | "postpaid";
  /** Customer phone number (electricity token delivery, cable). */
  phoneNumber?: string;
  /** This provider's own code for the catalogue product, from the providers file; absent: the adapter's default mapping. */
  providerCode?: string;
}

/**
 * Why a provider did not deliver an order, when its answer says more than the call alone: a refusal of the
 * destination or for lack of our float there, or a failure after it took the order (`not_delivered`).
 */
export type ProviderFailureCode = Extract<
  FailureCode,
  "provider_refused" | "invalid_destination" | "insufficient_provider_float" | "not_delivered"
>;

/**
 * A provider's answer about an order. `result` holds values for the transaction's metadata:
 * electricity `token`, `units`, `receipt_number`; partial data `delivered_mb`. A failure's `failureCode`,
 * when absent, follows from the call: `provider_refused` for a vend's answer, `not_delivered` for a re-query's.
 * `message` is the provider's own words, for operators only.
 */
export type ProviderOutcome =
  | { status: "successful"; providerReference: string; result?: Record<string, string>; deliveredMb?: number }
  | { status: "failed"; providerReference?: string; message: string; failureCode?: ProviderFailureCode }
  | { status: "pending"; providerReference?: string; message?: string };

/** `requery` of an order the provider never received. */
export interface ProviderNotFound {
  status: "not_found";
}

export interface CustomerQuery {
  service: "electricity" | "cable";
  network: string;
  /** Meter or smartcard number. */
  number: string;
  meterType?: "prepaid" | "postpaid";
}

export interface CustomerInfo {
  customerName: string;
  address?: string | null;
  currentBouquet?: string | null;
  dueDate?: string | null;
}

/**
 * The provider could not be reached or answered nonsense: the order's fate is unknown, so the
 * caller must re-query before any resend. Never means "failed".
 */
export class ProviderUnavailableError extends Error {
  constructor(
    readonly provider: string,
    message: string,
    /**
     * The provider did answer (an HTTP 5xx, a body we cannot read): it has finished with the request, so an
     * immediate re-query tells its fate. False for a timeout or a broken connection, where the request may
     * still be in flight at the provider.
     */
    readonly answered = false,
  ) {
    super(`${provider}: ${message}`);
  }
}

/** One plan a provider sells at a fixed face value, as its plan list gives it. */
export interface ProviderPlan {
  /** The provider's own code: what a vend of it sends (VTpass `variation_code`, ClubKonnect `DataPlan`). */
  code: string;
  name: string;
  service: ServiceCode;
  network: string;
  faceValueKobo: number;
}

/** A provider's whole plan list, and the services it covers (its products of other services are not in question). */
export interface ProviderPlanList {
  services: ServiceCode[];
  plans: ProviderPlan[];
}

/** One interface for every upstream: in-process (test mode) and HTTP providers alike. */
export interface ProviderAdapter {
  readonly name: string;
  vend(order: ProviderOrder): Promise<ProviderOutcome>;
  requery(order: ProviderOrder): Promise<ProviderOutcome | ProviderNotFound>;
  /** null when the provider knows no such customer. */
  verifyCustomer(query: CustomerQuery): Promise<CustomerInfo | null>;
  /** Our float at the provider, in kobo; absent when the provider cannot report it. Throws ProviderUnavailableError. */
  balance?(): Promise<number>;
  /** Every plan it sells now; absent when it cannot list them. Throws ProviderUnavailableError. */
  listPlans?(): Promise<ProviderPlanList>;
}

/**
 * How a provider signs `X-Provider-Signature` (checked by src/callbacks/signature.ts): `timestamped` signs
 * `<t>.<raw body>` so a captured callback expires with the replay window; `body` signs the raw body alone.
 */
export type CallbackSignatureScheme = "timestamped" | "body";

/** A provider's final update in the common callback format (the `ProviderCallback` schema). */
export type CommonCallback = components["schemas"]["ProviderCallback"];

/** How one provider's callbacks to `/callbacks/providers/{name}` are authenticated and read. */
export interface ProviderCallbacks {
  /** The bearer token it sends. */
  token: string;
  /** The HMAC secret of its signature. */
  secret: string;
  scheme: CallbackSignatureScheme;
  /** Turns the provider's own body into the common format; null if it is not a final update. Absent: already common. */
  translate?: (body: unknown) => CommonCallback | null;
}

/** The order an unsigned status notification names (never its outcome: that is re-queried). */
export interface CallbackHint {
  /** The request id the order was sent under. */
  requestId?: string;
  /** The provider's own id of the order. */
  providerReference?: string;
}

/** What a plugin's adapter may use of this process. */
export interface ProviderContext {
  db: Database;
}

/** What a plugin's background work may use: the database, the log, and where this service's API listens. */
export interface ProviderTaskContext extends ProviderContext {
  logger: Logger;
  apiBaseUrl: string;
  /** The worker's poll interval: how often periodic work runs. */
  pollMs: number;
}

/**
 * One provider, self-contained: it reads its own variables, builds its adapter, and says how its
 * callbacks are checked. A plugin is listed once, in src/providers/registry.ts.
 */
export interface ProviderPlugin<C, N extends string = string> {
  /** Its name (and its key in the registry): the transactions' `provider`, the `{name}` of its callback URL. */
  readonly name: N;
  /** The key mode whose vends it carries. */
  readonly mode: Mode;
  /**
   * The prefix of its variables (`VTU_`). In the providers file (PROVIDERS_FILE) the same settings are
   * the lower-case keys without it (`VTU_BASE_URL` → `base_url`), secrets as `<key>_env` naming a variable.
   */
  readonly envPrefix: string;
  /** Its settings from its own variables, or undefined when they are not set; a bad value throws through `read`. */
  readConfig(read: EnvReader): C | undefined;
  /** The longest one call to it can take; absent when it answers from this service's own database. */
  longestCall?(config: C): ProviderCallBound;
  createAdapter(config: C, context: ProviderContext): ProviderAdapter;
  /** How its callbacks to `/callbacks/providers/{name}` are checked; absent when it sends none there. */
  callbacks?(config: C): ProviderCallbacks;
  /**
   * Reads an unsigned GET notification to `/callbacks/providers/{name}` (its query parameters): the order it
   * names, to be re-queried at once; null when it names none. Absent: the provider sends none.
   */
  callbackHint?(query: Record<string, string>): CallbackHint | null;
  /** Periodic work the provider needs done in the background. */
  tasks?(config: C, context: ProviderTaskContext): Task[];
  /** Leased work the provider needs done in the background, each job when it is due (the sandbox's delayed callbacks). */
  queues?(config: C, context: ProviderTaskContext): Queue[];
}
