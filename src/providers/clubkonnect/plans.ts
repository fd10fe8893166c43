import { nairaToKobo } from "../../lib/shared/money.ts";
import { isRecord, readText } from "../readings.ts";
import type { ProviderPlan } from "../types.ts";
import { networkOfCode } from "./mapping.ts";

/** Network names ClubKonnect may use as keys, for lists whose entries carry no `ID`. */
const networkNames: Readonly<Record<string, string>> = {
  mtn: "mtn",
  glo: "glo",
  airtel: "airtel",
  "9mobile": "9mobile",
  m_9mobile: "9mobile",
};

/**
 * Reads the data plan list (`APIDatabundlePlansV2.asp`): `{MOBILE_NETWORK: {MTN: [{ID: "01", PRODUCT: [{PRODUCT_ID:
 * "500.0", PRODUCT_NAME, PRODUCT_AMOUNT: "140.00", …}]}], Glo: […], …}}`. `PRODUCT_ID` is the `DataPlan` an order
 * sends. Networks we do not sell are left out. A string: why it cannot be read.
 */
export function readClubkonnectDataPlans(body: unknown): ProviderPlan[] | string {
  if (!isRecord(body)) return "the answer is not a JSON object";
  const networks = body.MOBILE_NETWORK;
  if (!isRecord(networks)) {
    const word = readText(body, "status");
    return word ? `status ${word}` : "the answer has no MOBILE_NETWORK";
  }
  const plans: ProviderPlan[] = [];
  for (const [key, entries] of Object.entries(networks)) {
    if (!Array.isArray(entries)) return `MOBILE_NETWORK.${key} is not a list`;
    for (const entry of entries) {
      if (!isRecord(entry)) return `MOBILE_NETWORK.${key} holds something that is not an object`;
      const id = readText(entry, "ID");
      const network = id ? networkOfCode(id.padStart(2, "0")) : networkNames[key.toLowerCase()];
      if (!network) continue;
      const products = entry.PRODUCT;
      if (!Array.isArray(products)) return `MOBILE_NETWORK.${key} has no PRODUCT list`;
      for (const [index, product] of products.entries()) {
        const code = isRecord(product) ? readText(product, "PRODUCT_ID") : undefined;
        const faceValueKobo = isRecord(product) ? nairaToKobo(product.PRODUCT_AMOUNT) : undefined;
        if (!isRecord(product) || !code || code.length > 64 || faceValueKobo === undefined) {
          return `MOBILE_NETWORK.${key} PRODUCT ${index} has no readable PRODUCT_ID and PRODUCT_AMOUNT`;
        }
        const name = (readText(product, "PRODUCT_NAME") ?? code).slice(0, 200);
        plans.push({ code, name, service: "data", network, faceValueKobo });
      }
    }
  }
  return plans;
}
