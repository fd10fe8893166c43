import { and, asc, eq, type SQL } from "drizzle-orm";
import type { ServiceCode } from "../../generated/constants.ts";
import type { components } from "../../generated/openapi-types.ts";
import type { Database } from "../db/client.ts";
import { networks, products, services } from "../db/schema/index.ts";
import { listPricing, type PlanPricing, planDiscountFor, planPriceFor } from "../orders/plan-pricing.ts";
import type { ProductRow } from "../orders/product-cache.ts";

type Network = components["schemas"]["Network"];
type Service = components["schemas"]["Service"];
type Product = components["schemas"]["Product"];
type PricingItem = components["schemas"]["PricingItem"];

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

/** The list price (a plan with no discounts of its own): the bundle price, or face value less the product's discount rounded down. */
export const priceFor = (product: ProductRow, amountKobo: number): number => planPriceFor(listPricing, product, amountKobo);

/** A product as an account on `plan` sees it: its discount is the plan's. */
export const presentProductOn = (plan: PlanPricing, row: ProductRow): Product => ({
  ...presentProduct(row),
  discount_bps: planDiscountFor(plan, row),
});

const presentPricing = (plan: PlanPricing, row: ProductRow): PricingItem => ({
  product_code: row.code,
  service: row.service,
  network: row.network,
  kind: row.kind,
  discount_bps: planDiscountFor(plan, row),
  price_kobo: row.kind === "fixed" ? planPriceFor(plan, row, row.priceKobo ?? 0) : null,
  min_amount_kobo: row.minAmountKobo,
  max_amount_kobo: row.maxAmountKobo,
  updated_at: row.updatedAt.toISOString(),
});

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

/** The active products as an account on `plan` sees them. */
export async function listProducts(db: Database, filters: ProductFilters, plan: PlanPricing): Promise<Product[]> {
  return (await listActiveProducts(db, filters)).map((row) => presentProductOn(plan, row));
}

/** What an account on `plan` pays for each active product. */
export async function getPricing(db: Database, filters: ProductFilters, plan: PlanPricing): Promise<PricingItem[]> {
  return (await listActiveProducts(db, filters)).map((row) => presentPricing(plan, row));
}
