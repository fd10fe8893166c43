import { asc, eq } from "drizzle-orm";
import type { PriceDiscountScope } from "../../generated/constants.ts";
import { accounts, pricePlanDiscounts, pricePlans } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { discountedPrice } from "../lib/shared/money.ts";
import type { TtlCache } from "../lib/ttl-cache.ts";
import type { ProductRow } from "./product-cache.ts";

/** The plan every account is on until an operator moves it; the migration creates it. */
export const standardPlan = "standard";

/** A price plan as pricing reads it: its discounts by scope, then key. */
export interface PlanPricing {
  name: string;
  updatedAt: Date;
  discounts: Record<PriceDiscountScope, ReadonlyMap<string, number>>;
}

/** The process's price plans by name (evicted everywhere when an operator edits one). */
export type PricePlanCache = TtlCache<PlanPricing>;
/** The process's account → plan name (evicted everywhere when an operator moves the account). */
export type AccountPlanCache = TtlCache<string>;

export interface PlanCaches {
  pricePlans: PricePlanCache;
  accountPlans: AccountPlanCache;
}

/** A product's list discount: its own `discount_bps` (a fixed product is sold at its price: none). */
const listDiscountOf = (product: ProductRow): number => (product.kind === "fixed" ? 0 : product.discountBps);

/**
 * The discount an account on `plan` gets for `product`: the plan's for the product, else for its network,
 * else for its service (the most specific wins), else the product's list discount.
 */
export function planDiscountFor(plan: PlanPricing, product: ProductRow): number {
  return (
    plan.discounts.product.get(product.code) ??
    plan.discounts.network.get(product.network) ??
    plan.discounts.service.get(product.service) ??
    listDiscountOf(product)
  );
}

/**
 * What the wallet pays for `amountKobo` of `product` on `plan`: face value (the amount of a range product,
 * the price of a fixed one) less the plan's discount, the discount rounded down to whole kobo.
 */
export function planPriceFor(plan: PlanPricing, product: ProductRow, amountKobo: number): number {
  const face = product.kind === "fixed" ? product.priceKobo : amountKobo;
  if (face === null) throw new Error(`fixed product ${product.code} has no price`);
  return discountedPrice(face, planDiscountFor(plan, product));
}

/** List prices: a plan with no discounts of its own (what `standard` is until an operator gives it some). */
export const listPricing: PlanPricing = planPricingOf("list", new Date(0), []);

/** A plan's rows as pricing reads them. */
export function planPricingOf(
  name: string,
  updatedAt: Date,
  rows: readonly { scope: PriceDiscountScope; key: string; discountBps: number }[],
): PlanPricing {
  const discounts = {
    service: new Map<string, number>(),
    network: new Map<string, number>(),
    product: new Map<string, number>(),
  };
  for (const row of rows) discounts[row.scope].set(row.key, row.discountBps);
  return { name, updatedAt, discounts };
}

/** One plan with its discounts (one query); undefined when there is no such plan. */
export async function loadPlanPricing(db: Executor, name: string): Promise<PlanPricing | undefined> {
  const rows = await db
    .select({ updatedAt: pricePlans.updatedAt, discount: pricePlanDiscounts })
    .from(pricePlans)
    .leftJoin(pricePlanDiscounts, eq(pricePlanDiscounts.plan, pricePlans.name))
    .where(eq(pricePlans.name, name))
    .orderBy(asc(pricePlanDiscounts.scope), asc(pricePlanDiscounts.key));
  const [first] = rows;
  if (!first) return undefined;
  return planPricingOf(
    name,
    first.updatedAt,
    rows.flatMap((row) => (row.discount ? [row.discount] : [])),
  );
}

async function findAccountPlan(db: Executor, accountId: string): Promise<string | undefined> {
  const [row] = await db.select({ plan: accounts.pricePlan }).from(accounts).where(eq(accounts.id, accountId)).limit(1);
  return row?.plan;
}

/**
 * The plan an account's orders are priced by, read through the process's caches (on a hit, no query:
 * the accept statement stays the vend's one round trip).
 */
export async function accountPricing(db: Executor, caches: PlanCaches, accountId: string): Promise<PlanPricing> {
  const name = (await caches.accountPlans.getOrLoad(accountId, () => findAccountPlan(db, accountId))) ?? standardPlan;
  const plan = await caches.pricePlans.getOrLoad(name, () => loadPlanPricing(db, name));
  if (!plan) throw new Error(`price plan ${name} does not exist`);
  return plan;
}

/** Every plan with its discounts, by name (two queries). */
export async function loadAllPlanPricing(db: Executor): Promise<PlanPricing[]> {
  const plans = await db.select().from(pricePlans).orderBy(asc(pricePlans.name));
  const discounts = await db.select().from(pricePlanDiscounts);
  return plans.map((plan) =>
    planPricingOf(
      plan.name,
      plan.updatedAt,
      discounts.filter((d) => d.plan === plan.name),
    ),
  );
}
