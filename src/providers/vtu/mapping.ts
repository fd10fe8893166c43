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

/** The pay body for an order, or null when this provider sells no such product. */
export function buildVtuPayRequest(order: ProviderOrder, fallbackPhone = defaultCustomerPhone): VtuPayRequest | null {
  const amount = order.amountKobo / 100;
  const base = { request_id: order.reference, amount };
  switch (order.service) {
    case "airtime": {
      const serviceID = lookup(networkServiceIds, order.network);
      if (!serviceID) return null;
      return { ...base, serviceID, billersCode: order.destination, phone: order.destination };
    }
    case "data": {
      const network = lookup(networkServiceIds, order.network);
      if (!network) return null;
      return {
        ...base,
        serviceID: `${network}-data`,
        billersCode: order.destination,
        variation_code: order.providerCode ?? order.productCode,
        phone: order.destination,
      };
    }
    case "electricity": {
      const serviceID = lookup(discoServiceIds, order.network);
      if (!serviceID) return null;
      return {
        ...base,
        serviceID,
        billersCode: order.destination,
        variation_code: meterTypeOf(order),
        phone: order.phoneNumber ?? fallbackPhone,
      };
    }
    case "cable": {
      const serviceID = lookup(cableServiceIds, order.network);
      if (!serviceID) return null;
      return {
        ...base,
        serviceID,
        billersCode: order.destination,
        variation_code: order.providerCode ?? order.productCode,
        phone: order.phoneNumber ?? fallbackPhone,
        subscription_type: "change",
      };
    }
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
