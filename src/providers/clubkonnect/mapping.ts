import type { CustomerQuery, ProviderOrder } from "../types.ts";

/** ClubKonnect's `MobileNetwork` codes (9mobile trades as t2mobile there). */
const networkCodes: Readonly<Record<string, string>> = {
  mtn: "01",
  glo: "02",
  "9mobile": "03",
  airtel: "04",
};

/** ClubKonnect's `ElectricCompany` codes for our discos. */
const discoCodes: Readonly<Record<string, string>> = {
  ekedc: "01",
  ikedc: "02",
  aedc: "03",
  kedco: "04",
  phed: "05",
  jed: "06",
  ibedc: "07",
  kaedco: "08",
  eedc: "09",
  bedc: "10",
  yedc: "11",
};

/** ClubKonnect's `CableTV` codes. */
const cableCodes: Readonly<Record<string, string>> = {
  dstv: "dstv",
  gotv: "gotv",
  startimes: "startimes",
  showmax: "showmax",
};

const meterTypeCodes = { prepaid: "01", postpaid: "02" } as const;

/**
 * The default `DataPlan` for each of our data products, in ClubKonnect's style (the bundle's megabytes, a
 * variant after the point). These are defaults only: ClubKonnect's plan list changes, so `order.providerCode`,
 * set from the providers file, overrides them.
 */
const defaultDataPlans: Readonly<Record<string, string>> = {
  "mtn-data-500mb-7d": "500.0",
  "mtn-data-1gb-1d": "1000.1",
  "mtn-data-1gb-7d": "1000.0",
  "mtn-data-2gb-30d": "2000.0",
  "mtn-data-10gb-30d": "10000.0",
  "mtn-data-20gb-30d": "20000.0",
  "mtn-data-40gb-30d": "40000.0",
  "mtn-data-75gb-30d": "75000.0",
  "glo-data-750mb-1d": "750.1",
  "glo-data-5gb-30d": "5000.0",
  "glo-data-6gb-30d": "6000.0",
  "glo-data-11gb-30d": "11000.0",
  "glo-data-18gb-30d": "18000.0",
  "glo-data-38gb-30d": "38000.0",
  "airtel-data-500mb-7d": "500.0",
  "airtel-data-1gb-1d": "1000.1",
  "airtel-data-2gb-2d": "2000.2",
  "airtel-data-2gb-30d": "2000.0",
  "airtel-data-3gb-2d": "3000.2",
  "airtel-data-4gb-30d": "4000.0",
  "airtel-data-10gb-30d": "10000.0",
  "airtel-data-18gb-30d": "18000.0",
  "airtel-data-25gb-30d": "25000.0",
  "airtel-data-60gb-30d": "60000.0",
  "9mobile-data-500mb-30d": "500.0",
  "9mobile-data-650mb-1d": "650.1",
  "9mobile-data-1gb-1d": "1000.1",
  "9mobile-data-2gb-3d": "2000.3",
  "9mobile-data-2gb-30d": "2000.0",
  "9mobile-data-11gb-30d": "11000.0",
  "9mobile-data-15gb-30d": "15000.0",
  "9mobile-data-40gb-30d": "40000.0",
};

/** Our network for one of ClubKonnect's `MobileNetwork` codes ("01" → mtn), or undefined. */
export function networkOfCode(code: string): string | undefined {
  return Object.entries(networkCodes).find(([, value]) => value === code)?.[0];
}

/** ClubKonnect requires `PhoneNo` on electricity and cable orders; sent for orders that carry none. */
export const fallbackCustomerPhone = "08000000000";

export type ClubkonnectOrderEndpoint = "APIAirtimeV1.asp" | "APIDatabundleV1.asp" | "APICableTVV1.asp" | "APIElectricityV1.asp";
export type ClubkonnectVerifyEndpoint = "APIVerifyElectricityV1.asp" | "APIVerifyCableTVV1.0.asp";

/** One GET to ClubKonnect, without the credentials (and `CallBackURL`) the client adds. */
export interface ClubkonnectRequest<E extends string> {
  endpoint: E;
  params: Record<string, string>;
}

/** What to send for an order, or why ClubKonnect cannot sell it (nothing is sent then). */
export type ClubkonnectOrderPlan =
  | { kind: "send"; request: ClubkonnectRequest<ClubkonnectOrderEndpoint> }
  | { kind: "unsold"; message: string };

function lookup(table: Readonly<Record<string, string>>, key: string): string | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

function meterTypeOf(order: Pick<ProviderOrder, "meterType" | "productCode">): "prepaid" | "postpaid" {
  if (order.meterType) return order.meterType;
  return order.productCode.endsWith("-postpaid") ? "postpaid" : "prepaid";
}

/** Naira, as ClubKonnect takes amounts (our kobo / 100). */
function naira(amountKobo: number): string {
  return String(amountKobo / 100);
}

function unsold(message: string): ClubkonnectOrderPlan {
  return { kind: "unsold", message: `ClubKonnect sells no ${message}` };
}

function send(endpoint: ClubkonnectOrderEndpoint, params: Record<string, string>): ClubkonnectOrderPlan {
  return { kind: "send", request: { endpoint, params } };
}

/** The order's GET (RequestID = our reference), or why ClubKonnect does not sell the product. */
export function planClubkonnectOrder(order: ProviderOrder, fallbackPhone = fallbackCustomerPhone): ClubkonnectOrderPlan {
  const requestId = { RequestID: order.reference };
  /** A bill's last parameters: the customer's phone (ours when none was given), then our reference. */
  const billPayer = { PhoneNo: order.phoneNumber ?? fallbackPhone, ...requestId };
  switch (order.service) {
    case "airtime": {
      const network = lookup(networkCodes, order.network);
      if (!network) return unsold(`airtime for ${order.network}`);
      const params = { MobileNetwork: network, Amount: naira(order.amountKobo), MobileNumber: order.destination };
      return send("APIAirtimeV1.asp", { ...params, ...requestId });
    }
    case "data": {
      const network = lookup(networkCodes, order.network);
      const plan = order.providerCode ?? lookup(defaultDataPlans, order.productCode);
      if (!network || !plan) return unsold(`data bundle ${order.productCode} for ${order.network}`);
      return send("APIDatabundleV1.asp", {
        MobileNetwork: network,
        DataPlan: plan,
        MobileNumber: order.destination,
        ...requestId,
      });
    }
    case "electricity": {
      const company = lookup(discoCodes, order.network);
      if (!company) return unsold(`electricity for ${order.network}`);
      const meter = { ElectricCompany: company, MeterType: meterTypeCodes[meterTypeOf(order)], MeterNo: order.destination };
      return send("APIElectricityV1.asp", { ...meter, Amount: naira(order.amountKobo), ...billPayer });
    }
    case "cable": {
      const cable = lookup(cableCodes, order.network);
      if (!cable) return unsold(`cable for ${order.network}`);
      // ClubKonnect's bouquet codes mostly match ours (dstv-padi, gotv-max); the providers file maps the rest.
      const bouquet = { CableTV: cable, Package: order.providerCode ?? order.productCode, SmartCardNo: order.destination };
      return send("APICableTVV1.asp", { ...bouquet, ...billPayer });
    }
  }
}

/** The verification GET for a meter or smartcard, or null when ClubKonnect has no such biller. */
export function planClubkonnectVerify(query: CustomerQuery): ClubkonnectRequest<ClubkonnectVerifyEndpoint> | null {
  if (query.service === "electricity") {
    const company = lookup(discoCodes, query.network);
    if (!company) return null;
    const meterType = meterTypeCodes[query.meterType ?? "prepaid"];
    return {
      endpoint: "APIVerifyElectricityV1.asp",
      params: { ElectricCompany: company, MeterNo: query.number, MeterType: meterType },
    };
  }
  const cable = lookup(cableCodes, query.network);
  return cable ? { endpoint: "APIVerifyCableTVV1.0.asp", params: { CableTV: cable, SmartCardNo: query.number } } : null;
}
