import { and, asc, eq } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import type { Database } from "../db/client.ts";
import { networks, products } from "../db/schema/index.ts";
import { AppError, type FieldError, validationError } from "../errors.ts";
import { maskDestination } from "../lib/mask.ts";
import type { Mode } from "../lib/scope.ts";
import { isMeterNumber, isSmartcardNumber } from "../lib/shared/destinations.ts";
import { callProvider, type ProviderCallDeps } from "../providers/call.ts";
import type { Providers } from "../providers/registry.ts";
import type { CustomerInfo, CustomerQuery } from "../providers/types.ts";

type MeterVerifyRequest = components["schemas"]["MeterVerifyRequest"];
type MeterVerification = components["schemas"]["MeterVerification"];
type SmartcardVerifyRequest = components["schemas"]["SmartcardVerifyRequest"];
type SmartcardVerification = components["schemas"]["SmartcardVerification"];
type NetworkRow = typeof networks.$inferSelect;

interface Resolved {
  /** The field the caller used. */
  field: string;
  value: string;
}

/**
 * One value from a canonical field and its aliases. Aliases that disagree give one error per
 * field involved; none given is an error on the canonical (first) name.
 */
export function resolveAlias<K extends string>(
  body: Partial<Record<K, string>>,
  names: readonly [K, ...K[]],
  errors: FieldError[],
): Resolved | undefined {
  const given = names.flatMap((field) => {
    const value = body[field];
    return value === undefined ? [] : [{ field, value }];
  });
  const [first] = given;
  if (!first) {
    errors.push({ field: names[0], message: "is required" });
    return undefined;
  }
  let conflict = false;
  for (const { field, value } of given) {
    const others = given.filter((other) => other.value !== value).map((other) => other.field);
    if (others.length === 0) continue;
    conflict = true;
    errors.push({ field, message: `conflicts with ${others.join(" and ")}` });
  }
  return conflict ? undefined : first;
}

/** The network row when `network` names one of the given service; otherwise an error on the field used. */
async function resolveNetwork(
  db: Database,
  network: Resolved | undefined,
  service: "electricity" | "cable",
  errors: FieldError[],
): Promise<NetworkRow | undefined> {
  if (!network) return undefined;
  const rows = await db.select().from(networks).where(eq(networks.service, service)).orderBy(asc(networks.sortOrder));
  const row = rows.find((r) => r.code === network.value);
  if (!row) {
    const kind = service === "electricity" ? "an electricity distributor (disco)" : "a cable TV biller";
    errors.push({ field: network.field, message: `must be ${kind}: ${rows.map((r) => r.code).join(", ")}` });
  }
  return row;
}

/**
 * Asks the providers of the query's route, in order, skipping those disabled or failing; a provider that
 * cannot answer hands over to the next (verification changes nothing, so asking twice is safe). No
 * provider for the route is 503 NO_ROUTE; none answering is 502.
 */
async function lookUpCustomer(
  providers: Providers,
  mode: Mode,
  query: CustomerQuery,
  calls: ProviderCallDeps,
): Promise<CustomerInfo | null> {
  const candidates = providers.candidates(mode, { service: query.service, network: query.network });
  if (candidates.length === 0) throw new AppError("NO_ROUTE", `No provider route for ${mode} verification at ${query.network}`);
  const usable = candidates.filter((name) => providers.health.usable(name, query.service, false));
  if (usable.length === 0) {
    throw new AppError(
      "NO_ROUTE",
      `No provider is available for ${mode} verification at ${query.network} (${candidates.join(", ")}: disabled or failing)`,
    );
  }
  for (const name of usable) {
    const provider = providers.get(name);
    if (!provider) continue;
    const answer = await callProvider(calls, name, "verify", () => provider.verifyCustomer(query));
    if (answer.kind === "answered") return answer.value;
  }
  throw new AppError("PROVIDER_ERROR", `Verification at ${query.network} failed at the provider; try again`);
}

function customerNotFound(what: string, number: string, network: NetworkRow): AppError {
  return new AppError(
    "CUSTOMER_NOT_FOUND",
    `No customer found for ${what} ${maskDestination(number)} at ${network.name} (${network.code})`,
  );
}

/** What is verified at each kind of biller: the number's field and the form it must have. */
const accountNumbers = {
  electricity: { field: "meter_number", valid: isMeterNumber, problem: "must be 11 to 13 digits" },
  cable: { field: "smartcard_number", valid: isSmartcardNumber, problem: "must be 10 to 12 digits" },
} as const;

type TargetFields = "network" | "biller" | "meter_number" | "smartcard_number" | "account_number" | "destination";

/** The biller (network or biller) and the number at it (its own field, account_number or destination), checked. */
async function resolveTarget(
  db: Database,
  body: Partial<Record<TargetFields, string>>,
  service: "electricity" | "cable",
  errors: FieldError[],
): Promise<{ network: NetworkRow | undefined; number: Resolved | undefined }> {
  const account = accountNumbers[service];
  const network = resolveAlias(body, ["network", "biller"], errors);
  const number = resolveAlias(body, [account.field, "account_number", "destination"], errors);
  if (number && !account.valid(number.value)) errors.push({ field: number.field, message: account.problem });
  return { network: await resolveNetwork(db, network, service, errors), number };
}

/** A look-up of the customer behind a number, before payment, with the key's mode. Nothing is charged. */
type Verification<Request, Answer> = (
  db: Database,
  providers: Providers,
  mode: Mode,
  body: Request,
  /** Where the provider calls are counted. */
  calls?: ProviderCallDeps,
) => Promise<Answer>;

/** The customer behind a meter at a disco. */
export const verifyMeter: Verification<MeterVerifyRequest, MeterVerification> = async (db, providers, mode, body, calls = {}) => {
  const errors: FieldError[] = [];
  const { network: disco, number: meter } = await resolveTarget(db, body, "electricity", errors);
  const meterType = body.meter_type ?? "prepaid";
  const [product] = disco
    ? await db
        .select()
        .from(products)
        .where(and(eq(products.network, disco.code), eq(products.meterType, meterType), eq(products.active, true)))
        .orderBy(asc(products.sortOrder))
        .limit(1)
    : [];
  if (disco && !product) errors.push({ field: "meter_type", message: `${meterType} meters are not sold at ${disco.code}` });
  if (errors.length > 0 || !disco || !meter || !product) throw validationError(errors);
  const customer = await lookUpCustomer(
    providers,
    mode,
    {
      service: "electricity",
      network: disco.code,
      number: meter.value,
      meterType,
    },
    calls,
  );
  if (!customer) throw customerNotFound("meter", meter.value, disco);
  return {
    network: disco.code,
    meter_number: maskDestination(meter.value),
    meter_type: meterType,
    customer_name: customer.customerName,
    address: customer.address ?? null,
    min_amount_kobo: product.minAmountKobo ?? 0,
  };
};

/** The customer and current bouquet behind a smartcard at a cable biller. */
export const verifySmartcard: Verification<SmartcardVerifyRequest, SmartcardVerification> = async (
  db,
  providers,
  mode,
  body,
  calls = {},
) => {
  const errors: FieldError[] = [];
  const { network: biller, number: card } = await resolveTarget(db, body, "cable", errors);
  if (errors.length > 0 || !biller || !card) throw validationError(errors);
  const customer = await lookUpCustomer(providers, mode, { service: "cable", network: biller.code, number: card.value }, calls);
  if (!customer) throw customerNotFound("smartcard", card.value, biller);
  return {
    biller: biller.code,
    // Deprecated alias of `biller`, still answered for clients that read it.
    network: biller.code,
    smartcard_number: maskDestination(card.value),
    customer_name: customer.customerName,
    current_bouquet: customer.currentBouquet ?? null,
    due_date: customer.dueDate ?? null,
  };
};
