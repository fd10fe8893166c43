import type { components } from "../../generated/openapi-types.ts";
import { priceFor } from "../catalogue/service.ts";
import { type FieldError, validationError } from "../errors.ts";
import { isMeterNumber, isSmartcardNumber, normalisePhone } from "../lib/numbers.ts";
import type { ProductRow } from "../processing/products.ts";
import { pickAlias, requireAlias } from "./aliases.ts";

type Schemas = components["schemas"];

/** A vend request resolved against the catalogue: everything needed to accept it. */
export interface VendOrder {
  product: ProductRow;
  destination: string;
  amountKobo: number;
  priceKobo: number;
  clientReference: string | null;
  /** Caller metadata (service-owned keys removed) merged with the service-set keys. */
  metadata: Record<string, string>;
}

const serviceOwnedKeys = ["route", "plan_name", "product_id", "delivered_mb", "requested_mb", "partial"];

function callerMetadata(metadata: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata ?? {})) if (!serviceOwnedKeys.includes(key)) out[key] = value;
  return out;
}

function fail(errors: FieldError[]): never {
  throw validationError(errors);
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

async function activeProduct(lookup: ProductLookup, code: string, field: string, services: string[], errors: FieldError[]) {
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

function order(
  product: ProductRow,
  destination: string,
  amountKobo: number,
  clientReference: string | undefined,
  metadata: Record<string, string>,
): VendOrder {
  return {
    product,
    destination,
    amountKobo,
    priceKobo: priceFor(product, amountKobo),
    clientReference: clientReference ?? null,
    metadata,
  };
}

/** POST /api/v1/vend: airtime and data by product code to a phone number. */
export async function resolveProductVend(lookup: ProductLookup, body: Schemas["VendRequest"], route: string): Promise<VendOrder> {
  const errors: FieldError[] = [];
  const raw = body as Record<string, unknown>;
  const code = pickAlias<string>(raw, ["serviceid", "service_id", "product_code"], errors);
  const phone = pickAlias<string>(raw, ["receiver_phone_number", "destination", "phone_number"], errors);
  const amount = pickAlias<number>(raw, ["amount_kobo", "amount"], errors);
  const hasCode = requireAlias(code, "product_code", ["product_code", "serviceid", "service_id"], errors);
  const hasPhone = requireAlias(phone, "phone_number", ["phone_number", "receiver_phone_number", "destination"], errors);
  const destination = hasPhone ? normalisePhone(phone.value) : null;
  if (hasPhone && !destination)
    errors.push({ field: phone.field, message: "is not a Nigerian phone number (080…, +234… or 234…)" });
  const product = hasCode ? await activeProduct(lookup, code.value, code.field, ["airtime", "data"], errors) : undefined;
  if (product && body.network !== undefined && body.network !== product.network) {
    errors.push({ field: "network", message: `does not match the product's network (${product.network})` });
  }
  const amountKobo = product ? resolveAmount(product, amount.value, amount.field ?? "amount_kobo", errors) : undefined;
  if (errors.length > 0 || !product || !destination || amountKobo === undefined) fail(errors);
  return order(product, destination, amountKobo, body.client_reference, {
    ...callerMetadata(body.metadata),
    data_type: product.service,
    plan_name: product.name,
    product_id: product.id,
    route,
  });
}

/** POST /api/v1/bills/electricity. */
export async function resolveElectricityVend(
  lookup: ProductLookup,
  body: Schemas["ElectricityVendRequest"],
  route: string,
): Promise<VendOrder> {
  const errors: FieldError[] = [];
  const raw = body as Record<string, unknown>;
  const disco = pickAlias<string>(raw, ["network", "biller"], errors);
  const meter = pickAlias<string>(raw, ["meter_number", "account_number", "destination"], errors);
  const amount = pickAlias<number>(raw, ["amount_kobo", "amount"], errors);
  const hasDisco = requireAlias(disco, "network", ["network", "biller"], errors);
  const hasMeter = requireAlias(meter, "meter_number", ["meter_number", "account_number", "destination"], errors);
  if (hasMeter && !isMeterNumber(meter.value)) errors.push({ field: meter.field, message: "must be 11 to 13 digits" });
  const phone = body.phone_number === undefined ? undefined : normalisePhone(body.phone_number);
  if (phone === null) errors.push({ field: "phone_number", message: "is not a Nigerian phone number (080…, +234… or 234…)" });
  const meterType = body.meter_type ?? "prepaid";
  let product: ProductRow | undefined;
  if (hasDisco) {
    const code = body.product_code ?? `${disco.value}-${meterType}`;
    product = await activeProduct(lookup, code, body.product_code ? "product_code" : disco.field, ["electricity"], errors);
    if (product && product.network !== disco.value)
      errors.push({ field: disco.field, message: `does not match the product's disco (${product.network})` });
    if (product && body.meter_type && product.meterType !== body.meter_type) {
      errors.push({ field: "meter_type", message: `does not match ${product.code} (${product.meterType})` });
    }
  }
  const amountKobo = product ? resolveAmount(product, amount.value, amount.field ?? "amount_kobo", errors) : undefined;
  if (errors.length > 0 || !product || !hasMeter || amountKobo === undefined) fail(errors);
  const metadata: Record<string, string> = {
    ...callerMetadata(body.metadata),
    meter_number: meter.value,
    meter_type: product.meterType ?? meterType,
    plan_name: product.name,
    product_id: product.id,
    route,
  };
  if (phone) metadata.phone_number = phone;
  return order(product, meter.value, amountKobo, body.client_reference, metadata);
}

/** POST /api/v1/bills/cable. */
export async function resolveCableVend(
  lookup: ProductLookup,
  body: Schemas["CableVendRequest"],
  route: string,
): Promise<VendOrder> {
  const errors: FieldError[] = [];
  const raw = body as Record<string, unknown>;
  const biller = pickAlias<string>(raw, ["network", "biller"], errors);
  const card = pickAlias<string>(raw, ["smartcard_number", "account_number", "destination"], errors);
  const code = pickAlias<string>(raw, ["product_code", "service_id", "serviceid"], errors);
  const amount = pickAlias<number>(raw, ["amount_kobo", "amount"], errors);
  const hasBiller = requireAlias(biller, "network", ["network", "biller"], errors);
  const hasCard = requireAlias(card, "smartcard_number", ["smartcard_number", "account_number", "destination"], errors);
  const hasCode = requireAlias(code, "product_code", ["product_code", "service_id", "serviceid"], errors);
  if (hasCard && !isSmartcardNumber(card.value)) errors.push({ field: card.field, message: "must be 10 to 12 digits" });
  const phone = body.phone_number === undefined ? undefined : normalisePhone(body.phone_number);
  if (phone === null) errors.push({ field: "phone_number", message: "is not a Nigerian phone number (080…, +234… or 234…)" });
  const product = hasCode ? await activeProduct(lookup, code.value, code.field, ["cable"], errors) : undefined;
  if (product && hasBiller && product.network !== biller.value) {
    errors.push({ field: biller.field, message: `does not match the bouquet's biller (${product.network})` });
  }
  const amountKobo = product ? resolveAmount(product, amount.value, amount.field ?? "amount_kobo", errors) : undefined;
  if (errors.length > 0 || !product || !hasCard || amountKobo === undefined) fail(errors);
  const metadata: Record<string, string> = {
    ...callerMetadata(body.metadata),
    smartcard_number: card.value,
    plan_name: product.name,
    product_id: product.id,
    route,
  };
  if (phone) metadata.phone_number = phone;
  return order(product, card.value, amountKobo, body.client_reference, metadata);
}
