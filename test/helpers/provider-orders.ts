import type { ProviderOrder } from "../../src/providers/types.ts";

/**
 * Builds orders as the worker hands them to an adapter: ₦500 of MTN airtime unless overridden, each with a
 * new reference `txn_<prefix><serial>`.
 */
export function providerOrders(prefix: string): (overrides?: Partial<ProviderOrder>) => ProviderOrder {
  let serial = 0;
  return (overrides = {}) => {
    serial += 1;
    return {
      reference: `txn_${prefix}${String(serial).padStart(16, "0")}`,
      mode: "live",
      service: "airtime",
      network: "mtn",
      productCode: "mtn-airtime",
      destination: "08031234567",
      amountKobo: 50_000,
      ...overrides,
    };
  };
}
