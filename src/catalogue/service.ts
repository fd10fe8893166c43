import { and, asc, eq, type SQL } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import type { Database } from "../db/client.ts";
import { networks, products, services } from "../db/schema/index.ts";
import { type Executor, withTransaction } from "../db/transaction.ts";
import { type FieldError, notFound, validationError } from "../errors.ts";
import { discountedPrice } from "../lib/shared/money.ts";
import type { ProductRow } from "../processing/products.ts";
import { announceCatalogueChanges, announcedChange, changesAnything } from "./changes.ts";

type Network = components["schemas"]["Network"];
type Service = components["schemas"]["Service"];
type Product = components["schemas"]["Product"];
type PricingItem = components["schemas"]["PricingItem"];
type ServiceCode = components["schemas"]["ServiceCode"];
type ProductUpdate = components["schemas"]["ProductUpdateRequest"];

export interface ProductFilters {
  network?: string;
  service?: ServiceCode;
}

/** Airtime and data are sold on the same telecom networks, whose `service` column is `airtime`. */
const networkServiceOf = (service: ServiceCode): ServiceCode => (service === "data" ? "airtime" : service);

export const presentProduct = (row: ProductRow): Product => ({
  code: row.code,
  id: row.id,
  name: row.name,
  service: row.service,
  network: row.network,
  kind: row.kind,
  price_kobo: row.priceKobo,
  min_amount_kobo: row.minAmountKobo,
  max_amount_kobo: row.maxAmountKobo,
  discount_bps: row.discountBps,
  requested_mb: row.requestedMb,
  validity_days: row.validityDays,
  meter_type: row.meterType,
  active: row.active,
  updated_at: row.updatedAt.toISOString(),
});

const presentPricing = (row: ProductRow): PricingItem => ({
  product_code: row.code,
  service: row.service,
  network: row.network,
  kind: row.kind,
  discount_bps: row.discountBps,
  price_kobo: row.kind === "fixed" ? row.priceKobo : null,
  min_amount_kobo: row.minAmountKobo,
  max_amount_kobo: row.maxAmountKobo,
  updated_at: row.updatedAt.toISOString(),
});

/** What the wallet pays: the bundle price, or face value less the discount rounded down to whole kobo. */
export function priceFor(product: ProductRow, amountKobo: number): number {
  if (product.kind === "fixed") {
    if (product.priceKobo === null) throw new Error(`fixed product ${product.code} has no price`);
    return product.priceKobo;
  }
  return discountedPrice(amountKobo, product.discountBps);
}

export async function listNetworks(db: Database, service?: ServiceCode): Promise<Network[]> {
  return db
    .select({ code: networks.code, name: networks.name, service: networks.service })
    .from(networks)
    .innerJoin(services, eq(services.code, networks.service))
    .where(service ? eq(networks.service, networkServiceOf(service)) : undefined)
    .orderBy(asc(services.sortOrder), asc(networks.sortOrder), asc(networks.code));
}

export async function listServices(db: Database): Promise<Service[]> {
  return db
    .select({ code: services.code, name: services.name })
    .from(services)
    .orderBy(asc(services.sortOrder), asc(services.code));
}

/** Active products, grouped by network in catalogue order. */
export async function listActiveProducts(db: Database, filters: ProductFilters): Promise<ProductRow[]> {
  const conditions: SQL[] = [eq(products.active, true)];
  if (filters.network) conditions.push(eq(products.network, filters.network));
  if (filters.service) conditions.push(eq(products.service, filters.service));
  const rows = await db
    .select({ product: products })
    .from(products)
    .innerJoin(networks, eq(networks.code, products.network))
    .innerJoin(services, eq(services.code, networks.service))
    .where(and(...conditions))
    .orderBy(asc(services.sortOrder), asc(networks.sortOrder), asc(networks.code), asc(products.sortOrder), asc(products.code));
  return rows.map((r) => r.product);
}

export async function listProducts(db: Database, filters: ProductFilters): Promise<Product[]> {
  return (await listActiveProducts(db, filters)).map(presentProduct);
}

export async function getPricing(db: Database, filters: ProductFilters): Promise<PricingItem[]> {
  return (await listActiveProducts(db, filters)).map(presentPricing);
}

function updateErrors(row: ProductRow, patch: ProductUpdate): FieldError[] {
  const errors: FieldError[] = [];
  if (row.kind === "range" && patch.price_kobo !== undefined) {
    errors.push({
      field: "price_kobo",
      message: "can only be set on a fixed-price product; range products are priced by discount_bps",
    });
  }
  if (row.kind === "fixed") {
    for (const field of ["min_amount_kobo", "max_amount_kobo"] as const) {
      if (patch[field] !== undefined) errors.push({ field, message: "can only be set on a range product" });
    }
    if (patch.discount_bps !== undefined && patch.discount_bps !== 0) {
      errors.push({ field: "discount_bps", message: "applies only to range products; change price_kobo instead" });
    }
    return errors;
  }
  const min = patch.min_amount_kobo ?? row.minAmountKobo;
  const max = patch.max_amount_kobo ?? row.maxAmountKobo;
  if (min !== null && max !== null && min > max) {
    if (patch.min_amount_kobo !== undefined) {
      errors.push({ field: "min_amount_kobo", message: `must not be greater than max_amount_kobo (${max})` });
    }
    if (patch.max_amount_kobo !== undefined) {
      errors.push({ field: "max_amount_kobo", message: `must not be less than min_amount_kobo (${min})` });
    }
  }
  return errors;
}

/**
 * Operator edit of one product, answered with the product before and after; unknown code is 404, an edit
 * that does not fit the product's kind is 400. An edit that changes nothing writes nothing (`updated_at`
 * stays); a change of price, range, discount or availability sends `catalogue.updated` in the same
 * transaction.
 */
export async function updateProduct(
  db: Executor,
  code: string,
  patch: ProductUpdate,
): Promise<{ before: Product; after: Product; changed: boolean }> {
  return withTransaction(db, async (tx) => {
    const [row] = await tx.select().from(products).where(eq(products.code, code)).for("update");
    if (!row) throw notFound(`Product ${code}`);
    const errors = updateErrors(row, patch);
    if (errors.length > 0) throw validationError(errors);
    const before = presentProduct(row);
    if (!changesAnything(before, patch)) return { before, after: before, changed: false };
    const [updated] = await tx
      .update(products)
      .set({
        name: patch.name,
        priceKobo: patch.price_kobo,
        discountBps: patch.discount_bps,
        active: patch.active,
        minAmountKobo: patch.min_amount_kobo,
        maxAmountKobo: patch.max_amount_kobo,
        updatedAt: new Date(),
      })
      .where(eq(products.code, code))
      .returning();
    if (!updated) throw new Error("product update returned nothing");
    const after = presentProduct(updated);
    const change = announcedChange(before, after);
    if (change) await announceCatalogueChanges(tx, [change]);
    return { before, after, changed: true };
  });
}
