import { unknownCustomerSuffix } from "./defaults.ts";

/**
 * The sandbox's customer book: every answer is derived from the number alone, so the same meter or
 * smartcard always gives the same customer. A number ending in `unknownCustomerSuffix` (`0000`)
 * belongs to no customer.
 */

/** A fixed word list written as text; `separator` splits it. */
const listOf = (text: string, separator: RegExp): readonly string[] => text.trim().split(separator);

const firstNames = listOf(
  `Adebayo Chinedu Aisha Ngozi Emeka Funmilayo Ibrahim Oluwaseun Amaka Musa Tunde Zainab
   Chiamaka Yusuf Temitope Obinna Halima Kelechi Folake Babajide Nneka Abubakar Ifeoma Segun`,
  /\s+/,
);

const lastNames = listOf(
  `Okafor Adeyemi Bello Eze Ogunleye Abdullahi Nwosu Balogun Danjuma Okonkwo Adebisi Usman
   Obi Olawale Ibekwe Suleiman Akinola Chukwu Lawal Onyekachi Ekwueme Bakare Garba Adeleke`,
  /\s+/,
);

const streets = listOf(
  `Allen Avenue, Adeola Odeku Street, Awolowo Road, Herbert Macaulay Way, Ahmadu Bello Way,
   Obafemi Awolowo Way, Nnamdi Azikiwe Street, Broad Street, Market Road, Independence Avenue,
   Aminu Kano Crescent, Ring Road, Station Road, Hospital Road, Zik Avenue, Murtala Mohammed Way`,
  /\s*,\s*/,
);

const cityByDisco: Record<string, string> = {
  ikedc: "Ikeja, Lagos",
  ekedc: "Lekki, Lagos",
  aedc: "Garki, Abuja",
  phed: "Port Harcourt, Rivers",
  ibedc: "Ibadan, Oyo",
  kedco: "Kano",
  eedc: "Enugu",
  jed: "Jos, Plateau",
  kaedco: "Kaduna",
  bedc: "Benin City, Edo",
  yedc: "Yola, Adamawa",
};

const dueDateEpoch = Date.UTC(2026, 0, 1);
const dayMs = 24 * 60 * 60 * 1000;

export interface SandboxMeterCustomer {
  customerName: string;
  address: string;
}

export interface SandboxSmartcardCustomer {
  customerName: string;
  currentBouquet: string | null;
  dueDate: string;
}

/** FNV-1a over the salted number: a stable, well-spread index source. */
function hashOf(value: string, salt: string): number {
  let hash = 0x811c9dc5;
  for (const char of `${salt}:${value}`) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

function pick<T>(list: readonly T[], value: string, salt: string): T {
  const item = list[hashOf(value, salt) % list.length];
  if (item === undefined) throw new Error("pick from an empty list");
  return item;
}

export const isUnknownCustomer = (number: string): boolean => number.endsWith(unknownCustomerSuffix);

export const sandboxCustomerName = (number: string): string =>
  `${pick(firstNames, number, "first")} ${pick(lastNames, number, "last")}`;

export function sandboxMeterCustomer(meterNumber: string, disco: string): SandboxMeterCustomer | null {
  if (isUnknownCustomer(meterNumber)) return null;
  const house = (hashOf(meterNumber, "house") % 120) + 1;
  const city = cityByDisco[disco] ?? "Nigeria";
  return {
    customerName: sandboxCustomerName(meterNumber),
    address: `${house} ${pick(streets, meterNumber, "street")}, ${city}`,
  };
}

/** `bouquets`: the biller's bouquets in catalogue order; the customer's current one is picked from them. */
export function sandboxSmartcardCustomer(smartcardNumber: string, bouquets: readonly string[]): SandboxSmartcardCustomer | null {
  if (isUnknownCustomer(smartcardNumber)) return null;
  const dueDate = new Date(dueDateEpoch + (hashOf(smartcardNumber, "due") % 365) * dayMs);
  return {
    customerName: sandboxCustomerName(smartcardNumber),
    currentBouquet: bouquets.length > 0 ? pick(bouquets, smartcardNumber, "bouquet") : null,
    dueDate: dueDate.toISOString().slice(0, 10),
  };
}
