import type { Mode } from "../auth/keys.ts";

/** What a provider needs to carry out one vend. Our `reference` is the provider request id. */
export interface ProviderOrder {
  reference: string;
  mode: Mode;
  service: "airtime" | "data" | "cable" | "electricity";
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
}

/**
 * A provider's answer about an order. `result` holds values for the transaction's metadata:
 * electricity `token`, `units`, `receipt_number`; partial data `delivered_mb`.
 */
export type ProviderOutcome =
  | { status: "successful"; providerReference: string; result?: Record<string, string>; deliveredMb?: number }
  | { status: "failed"; providerReference?: string; message: string }
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
  ) {
    super(`${provider}: ${message}`);
  }
}

/** One interface for every upstream: the sandbox and HTTP providers alike. */
export interface ProviderAdapter {
  readonly name: string;
  vend(order: ProviderOrder): Promise<ProviderOutcome>;
  requery(order: ProviderOrder): Promise<ProviderOutcome | ProviderNotFound>;
  /** null when the provider knows no such customer. */
  verifyCustomer(query: CustomerQuery): Promise<CustomerInfo | null>;
}
