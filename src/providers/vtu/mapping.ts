import type { CustomerQuery, ProviderOrder } from "../types.ts";

/** VTpass serviceIDs for airtime; data is the same ID with `-data`. 9mobile still trades as `etisalat` there. */
const networkServiceIds: Readonly<Record<string, string>> = {
  mtn: "mtn",
  airtel: "airtel",
  glo: "glo",
  "9mobile": "etisalat",
};

const discoServiceIds: Readonly<Record<string, string>> = {
  ikedc: "ikeja-electric",
  ekedc: "eko-electric",
  aedc: "abuja-electric",
  phed: "portharcourt-electric",
  ibedc: "ibadan-electric",
  kedco: "kano-electric",
  eedc: "enugu-electric",
  jed: "jos-electric",
  kaedco: "kaduna-electric",
  bedc: "benin-electric",
  yedc: "yola-electric",
};

const cableServiceIds: Readonly<Record<string, string>> = {
  dstv: "dstv",
  gotv: "gotv",
  startimes: "startimes",
  showmax: "showmax",
};

/** VTpass requires a phone on every pay; used for electricity and cable orders that carry none. */
export const defaultCustomerPhone = "08000000000";

export interface VtuPayRequest {
  request_id: string;
  serviceID: string;
  billersCode: string;
  variation_code?: string;
  /** Naira, as VTpass expects (our kobo / 100). */
  amount: number;
  phone: string;
  /** Cable: "change" buys the bouquet named by variation_code (rather than renewing the current one). */
  subscription_type?: "change";
}

export interface VtuVerifyRequest {
  billersCode: string;
  serviceID: string;
  type?: "prepaid" | "postpaid";
}

function lookup(table: Readonly<Record<string, string>>, key: string): string | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

function meterTypeOf(order: Pick<ProviderOrder, "meterType" | "productCode">): "prepaid" | "postpaid" {
  if (order.meterType) return order.meterType;
  return order.productCode.endsWith("-postpaid") ? "postpaid" : "prepaid";
}

/** The provider's service id of the order's product, or undefined when it sells none. */
function serviceIdOf(order: ProviderOrder): string | undefined {
  switch (order.service) {
    case "airtime":
      return lookup(networkServiceIds, order.network);
    case "data": {
      const network = lookup(networkServiceIds, order.network);
      return network ? `${network}-data` : undefined;
    }
    case "electricity":
      return lookup(discoServiceIds, order.network);
    case "cable":
      return lookup(cableServiceIds, order.network);
  }
}

/** A VTpass plan list: the `service-variations` of one serviceID, and the service and network it sells. */
export interface VtuPlanSource {
  serviceID: string;
  service: "data" | "cable";
  network: string;
}

/** Every serviceID whose `service-variations` list fixed-price plans: data per network, bouquets per cable biller. */
export function vtuPlanSources(): VtuPlanSource[] {
  const data = Object.entries(networkServiceIds).map(([network, id]) => ({
    serviceID: `${id}-data`,
    service: "data" as const,
    network,
  }));
  const cable = Object.entries(cableServiceIds).map(([network, serviceID]) => ({
    serviceID,
    service: "cable" as const,
    network,
  }));
  return [...data, ...cable];
}

/** The pay body for an order, or null when this provider sells no such product. */
export function buildVtuPayRequest(order: ProviderOrder, fallbackPhone = defaultCustomerPhone): VtuPayRequest | null {
  const serviceID = serviceIdOf(order);
  if (!serviceID) return null;
  const base = { request_id: order.reference, amount: order.amountKobo / 100, serviceID, billersCode: order.destination };
  const bundle = order.providerCode ?? order.productCode;
  switch (order.service) {
    case "airtime":
      return { ...base, phone: order.destination };
    case "data":
      return { ...base, variation_code: bundle, phone: order.destination };
    case "electricity":
      return { ...base, variation_code: meterTypeOf(order), phone: order.phoneNumber ?? fallbackPhone };
    case "cable":
      return { ...base, variation_code: bundle, phone: order.phoneNumber ?? fallbackPhone, subscription_type: "change" };
  }
}

/** The merchant-verify body for a meter or smartcard, or null when this provider has no such biller. */
export function buildVtuVerifyRequest(query: CustomerQuery): VtuVerifyRequest | null {
  if (query.service === "electricity") {
    const serviceID = lookup(discoServiceIds, query.network);
    if (!serviceID) return null;
    return { billersCode: query.number, serviceID, type: query.meterType ?? "prepaid" };
  }
  const serviceID = lookup(cableServiceIds, query.network);
  return serviceID ? { billersCode: query.number, serviceID } : null;
}
