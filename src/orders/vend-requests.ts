import type { ServiceCode } from "../../generated/constants.ts";
import type { components } from "../../generated/openapi-types.ts";
import { type FieldError, validationError } from "../errors.ts";
import { isMeterNumber, isSmartcardNumber, normalisePhone } from "../lib/shared/destinations.ts";
import type { VendOrder } from "./accept-vends.ts";
import { failureKeys } from "./failures.ts";
import type { ProductRow } from "./product-cache.ts";
import { type AliasedField, readAliased } from "./request-aliases.ts";

type Schemas = components["schemas"];

const productCodeField: AliasedField = { canonical: "product_code", names: ["serviceid", "service_id", "product_code"] };
const phoneField: AliasedField = { canonical: "phone_number", names: ["receiver_phone_number", "destination", "phone_number"] };
const billerField: AliasedField = { canonical: "network", names: ["network", "biller"] };
const meterField: AliasedField = { canonical: "meter_number", names: ["meter_number", "account_number", "destination"] };
const smartcardField: AliasedField = {
  canonical: "smartcard_number",
  names: ["smartcard_number", "account_number", "destination"],
};
const bouquetField: AliasedField = { canonical: "product_code", names: ["product_code", "service_id", "serviceid"] };

const serviceOwnedKeys: readonly string[] = [
  "route",
  "plan_name",
  "product_id",
  "delivered_mb",
  "requested_mb",
  "partial",
  "batch_id",
  "resolved_by_operator",
  ...failureKeys,
];
const notAPhone = "is not a Nigerian phone number (080…, +234… or 234…)";

function callerMetadata(metadata: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata ?? {})) if (!serviceOwnedKeys.includes(key)) out[key] = value;
  return out;
}

function fail(errors: FieldError[]): never {
  throw validationError(errors);
}

/** The customer phone of a bill payment: absent, normalised, or an error (then null). */
function optionalPhone(phone: string | undefined, errors: FieldError[]): string | null | undefined {
  const normalised = phone === undefined ? undefined : normalisePhone(phone);
  if (normalised === null) errors.push({ field: "phone_number", message: notAPhone });
  return normalised;
}

/** Face value: required and within the product's range, or the fixed price (an amount given must equal it). */
function resolveAmount(product: ProductRow, amount: number | undefined, field: string, errors: FieldError[]): number | undefined {
  if (product.kind === "fixed") {
    const price = product.priceKobo ?? 0;
    if (amount !== undefined && amount !== price)
      errors.push({ field, message: `must equal the fixed price of ${product.code} (${price} kobo) or be omitted` });
    return price;
  }
  if (amount === undefined) {
    errors.push({ field: "amount_kobo", message: `is required for ${product.code} (or: amount)` });
    return undefined;
  }
  const min = product.minAmountKobo ?? 1;
  const max = product.maxAmountKobo ?? Number.MAX_SAFE_INTEGER;
  if (amount < min || amount > max) errors.push({ field, message: `must be between ${min} and ${max} kobo for ${product.code}` });
  return amount;
}

/** Finds a product by code (callers may read through a cache). */
export type ProductLookup = (code: string) => Promise<ProductRow | undefined>;

/** What the caller's wallet pays for `amountKobo` of `product` (on the caller's price plan). */
export type PriceOf = (product: ProductRow, amountKobo: number) => number;

async function activeProduct(
  lookup: ProductLookup,
  code: string,
  field: string,
  services: readonly ServiceCode[],
  errors: FieldError[],
) {
  const product = await lookup(code);
  if (!product?.active) {
    errors.push({ field, message: `is not a known product code (see GET /api/v1/catalogue/products)` });
    return undefined;
  }
  if (!services.includes(product.service)) {
    errors.push({ field, message: `${code} is a ${product.service} product; this endpoint sells ${services.join(" and ")}` });
    return undefined;
  }
  return product;
}

/**
 * Picks the provider for a resolved product (its name is the metadata `route`); throws 503 NO_ROUTE when
 * none is available, once the body is known to be valid.
 */
export type ChooseRoute = (product: ProductRow) => string;

/** The order, its metadata being the caller's, then `own`, then the product and route, then the customer phone. */
function order(
  product: ProductRow,
  destination: string,
  amountKobo: number,
  body: { client_reference?: string; metadata?: Record<string, string> },
  route: ChooseRoute,
  price: PriceOf,
  own: Record<string, string>,
  phone?: string | null,
): VendOrder {
  const metadata: Record<string, string> = {
    ...callerMetadata(body.metadata),
    ...own,
    plan_name: product.name,
    product_id: product.id,
    route: route(product),
  };
  if (phone) metadata.phone_number = phone;
  return {
    product,
    destination,
    amountKobo,
    priceKobo: price(product, amountKobo),
    clientReference: body.client_reference ?? null,
    metadata,
  };
}

/**
 * Resolves one request body against the catalogue (products by `lookup`, the provider by `route`, the price
 * by `price`) into an order, or throws 400.
 */
export type VendResolver<Body> = (lookup: ProductLookup, body: Body, route: ChooseRoute, price: PriceOf) => Promise<VendOrder>;

/** A resolved amount for `product`, or undefined with the field's error added. */
const amountFor = (product: ProductRow | undefined, amount: { value?: number; field?: string }, errors: FieldError[]) =>
  product ? resolveAmount(product, amount.value, amount.field ?? "amount_kobo", errors) : undefined;

/** POST /api/v1/vend: airtime and data by product code to a phone number. */
export const resolveProductVend: VendResolver<Schemas["VendRequest"]> = async (lookup, body, route, price) => {
  const errors: FieldError[] = [];
  const { found, amount } = readAliased(body, [productCodeField, phoneField], errors);
  const [code, phone] = found;
  const destination = phone ? normalisePhone(phone.value) : null;
  if (phone && !destination) errors.push({ field: phone.field, message: notAPhone });
  const product = code ? await activeProduct(lookup, code.value, code.field, ["airtime", "data"], errors) : undefined;
  if (product && body.network !== undefined && body.network !== product.network) {
    errors.push({ field: "network", message: `does not match the product's network (${product.network})` });
  }
  const amountKobo = amountFor(product, amount, errors);
  if (errors.length > 0 || !product || !destination || amountKobo === undefined) fail(errors);
  return order(product, destination, amountKobo, body, route, price, { data_type: product.service });
};

/** POST /api/v1/bills/electricity. */
export const resolveElectricityVend: VendResolver<Schemas["ElectricityVendRequest"]> = async (lookup, body, route, price) => {
  const errors: FieldError[] = [];
  const { found, amount } = readAliased(body, [billerField, meterField], errors);
  const [disco, meter] = found;
  if (meter && !isMeterNumber(meter.value)) errors.push({ field: meter.field, message: "must be 11 to 13 digits" });
  const phone = optionalPhone(body.phone_number, errors);
  const meterType = body.meter_type ?? "prepaid";
  let product: ProductRow | undefined;
  if (disco) {
    const code = body.product_code ?? `${disco.value}-${meterType}`;
    product = await activeProduct(lookup, code, body.product_code ? "product_code" : disco.field, ["electricity"], errors);
    if (product && product.network !== disco.value)
      errors.push({ field: disco.field, message: `does not match the product's disco (${product.network})` });
    if (product && body.meter_type && product.meterType !== body.meter_type) {
      errors.push({ field: "meter_type", message: `does not match ${product.code} (${product.meterType})` });
    }
  }
  const amountKobo = amountFor(product, amount, errors);
  if (errors.length > 0 || !product || !meter || amountKobo === undefined) fail(errors);
  const own = { meter_number: meter.value, meter_type: product.meterType ?? meterType };
  return order(product, meter.value, amountKobo, body, route, price, own, phone);
};

/** POST /api/v1/bills/cable. */
export const resolveCableVend: VendResolver<Schemas["CableVendRequest"]> = async (lookup, body, route, price) => {
  const errors: FieldError[] = [];
  const { found, amount } = readAliased(body, [billerField, smartcardField, bouquetField], errors);
  const [biller, card, code] = found;
  if (card && !isSmartcardNumber(card.value)) errors.push({ field: card.field, message: "must be 10 to 12 digits" });
  const phone = optionalPhone(body.phone_number, errors);
  const product = code ? await activeProduct(lookup, code.value, code.field, ["cable"], errors) : undefined;
  if (product && biller && product.network !== biller.value) {
    errors.push({ field: biller.field, message: `does not match the bouquet's biller (${product.network})` });
  }
  const amountKobo = amountFor(product, amount, errors);
  if (errors.length > 0 || !product || !card || amountKobo === undefined) fail(errors);
  return order(product, card.value, amountKobo, body, route, price, { smartcard_number: card.value }, phone);
};

/** A single vend's request: the endpoint it came to and its body as validated. */
export type VendRequest =
  /** POST /api/v1/vend (airtime and data). */
  | { kind: "product"; body: Schemas["VendRequest"] }
  | { kind: "electricity"; body: Schemas["ElectricityVendRequest"] }
  | { kind: "cable"; body: Schemas["CableVendRequest"] };

/** Resolves a single vend's request with its endpoint's resolver (see VendResolver). */
export function resolveVendRequest(request: VendRequest, lookup: ProductLookup, route: ChooseRoute, price: PriceOf) {
  if (request.kind === "electricity") return resolveElectricityVend(lookup, request.body, route, price);
  if (request.kind === "cable") return resolveCableVend(lookup, request.body, route, price);
  return resolveProductVend(lookup, request.body, route, price);
}

/** The resolver of a bulk order's item by its `service`: a bill's own shape, or a product code's (airtime, data). */
export function resolverFor(service: string): VendResolver<Record<string, unknown>> {
  if (service === "electricity")
    return (lookup, fields, route, price) =>
      resolveElectricityVend(lookup, fields as Schemas["ElectricityVendRequest"], route, price);
  if (service === "cable")
    return (lookup, fields, route, price) => resolveCableVend(lookup, fields as Schemas["CableVendRequest"], route, price);
  return (lookup, fields, route, price) => resolveProductVend(lookup, fields as Schemas["VendRequest"], route, price);
}
