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

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A non-empty string or a finite number, as text. */
export function readText(source: Record<string, unknown>, key: string): string | undefined {
  const value = source[key];
  if (typeof value === "string") return value.trim() || undefined;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

function firstText(source: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = readText(source, key);
    if (value !== undefined) return value;
  }
  return undefined;
}

// Discos label tokens inconsistently: "Token : 1234-5678-...", "TOKEN: 1234 5678 ...", or the bare digits.
function tokenFrom(text: string): string | undefined {
  const labelled = /token\s*(?:no\.?|number)?\s*[:=-]?\s*(\d[\d -]{8,}\d)/i.exec(text);
  if (labelled?.[1]) return labelled[1].trim();
  return /^\d[\d -]{8,}\d$/.test(text) ? text : undefined;
}

// "Units: 12.5kWh", "Token : 4216... : 22.2 kWh" → "12.5" / "22.2"; a bare number only in a units field.
function unitsFrom(text: string, bare: boolean): string | undefined {
  const match = /units?\s*[:=]?\s*(\d+(?:\.\d+)?)/i.exec(text) ?? /(\d+(?:\.\d+)?)\s*kwh/i.exec(text);
  if (match?.[1]) return match[1];
  return bare && /^\d+(?:\.\d+)?$/.test(text) ? text : undefined;
}

function fitting(value: string | undefined, maxLength: number): string | undefined {
  return value !== undefined && value.length <= maxLength ? value : undefined;
}

/**
 * Electricity values from a delivered answer, for the transaction's metadata: `token`, `units` ("12.5 kWh",
 * as the test-mode provider writes them) and `receipt_number`. Explicit fields win over what `purchased_code` spells out.
 * Values too long for the callback format are left out rather than cut.
 */
export function readElectricityResult(answer: Record<string, unknown>): Record<string, string> | undefined {
  const purchased = readText(answer, "purchased_code") ?? "";
  const tokenField = firstText(answer, ["token", "Token", "mainToken"]);
  const unitsField = firstText(answer, ["units", "Units", "mainTokenUnits"]);
  const token = fitting(tokenField ? (tokenFrom(tokenField) ?? tokenField) : tokenFrom(purchased), 128);
  const kwh = unitsField ? unitsFrom(unitsField, true) : unitsFrom(purchased, false);
  const units = fitting(kwh ? `${kwh} kWh` : unitsField, 32);
  const receipt = fitting(
    firstText(answer, ["receipt_number", "receiptNumber", "ReceiptNumber", "receipt", "exchangeReference"]),
    64,
  );
  const result: Record<string, string> = {};
  if (token) result.token = token;
  if (units) result.units = units;
  if (receipt) result.receipt_number = receipt;
  return Object.keys(result).length > 0 ? result : undefined;
}
