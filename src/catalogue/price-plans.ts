import { asc, count, eq, inArray, sql } from "drizzle-orm";
import { type PriceDiscountScope, serviceCodes } from "../../generated/constants.ts";
import type { components } from "../../generated/openapi-types.ts";
import { accounts, networks, pricePlanDiscounts, pricePlans, products } from "../db/schema/index.ts";
import { type Executor, withTransaction } from "../db/transaction.ts";
import { AppError, type FieldError, notFound, validationError } from "../errors.ts";
import { loadPlanPricing, type PlanPricing, planPricingOf } from "../orders/plan-pricing.ts";
import { assignPricePlan, getAccountDetail } from "../wallet/account-records.ts";
import { announcePlanChange } from "./changes.ts";

type PricePlan = components["schemas"]["PricePlan"];
type PriceDiscount = components["schemas"]["PriceDiscount"];
type PricePlanCreate = components["schemas"]["PricePlanCreateRequest"];
type PricePlanUpdate = components["schemas"]["PricePlanUpdateRequest"];
type PlanRow = typeof pricePlans.$inferSelect;
type DiscountRow = typeof pricePlanDiscounts.$inferSelect;

const scopeOrder: Record<PriceDiscountScope, number> = { service: 0, network: 1, product: 2 };
const byScopeThenKey = (a: PriceDiscount, b: PriceDiscount) =>
  scopeOrder[a.scope] - scopeOrder[b.scope] || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0);

const presentDiscounts = (rows: readonly DiscountRow[]): PriceDiscount[] =>
  rows.map((row) => ({ scope: row.scope, code: row.key, discount_bps: row.discountBps })).sort(byScopeThenKey);

const presentPlan = (row: PlanRow, discounts: readonly DiscountRow[], accountCount: number): PricePlan => ({
  name: row.name,
  description: row.description,
  discounts: presentDiscounts(discounts),
  account_count: accountCount,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
});

async function accountCounts(db: Executor, names?: string[]): Promise<Map<string, number>> {
  const rows = await db
    .select({ plan: accounts.pricePlan, accounts: count() })
    .from(accounts)
    .where(names ? inArray(accounts.pricePlan, names) : undefined)
    .groupBy(accounts.pricePlan);
  return new Map(rows.map((row) => [row.plan, Number(row.accounts)]));
}

/** Every plan with its discounts and how many accounts are on it, by name. */
export async function listPricePlans(db: Executor): Promise<PricePlan[]> {
  const plans = await db.select().from(pricePlans).orderBy(asc(pricePlans.name));
  const discounts = await db.select().from(pricePlanDiscounts);
  const counts = await accountCounts(db);
  return plans.map((plan) =>
    presentPlan(
      plan,
      discounts.filter((d) => d.plan === plan.name),
      counts.get(plan.name) ?? 0,
    ),
  );
}

async function readPlan(db: Executor, name: string): Promise<PricePlan> {
  const [plan] = await db.select().from(pricePlans).where(eq(pricePlans.name, name));
  if (!plan) throw notFound(`Price plan ${name}`);
  const discounts = await db.select().from(pricePlanDiscounts).where(eq(pricePlanDiscounts.plan, name));
  return presentPlan(plan, discounts, (await accountCounts(db, [name])).get(name) ?? 0);
}

/** Each discount's problems: a scope and code given twice, or a code its scope does not know. */
async function discountErrors(db: Executor, discounts: readonly PriceDiscount[]): Promise<FieldError[]> {
  const keysOf = async (scope: PriceDiscountScope): Promise<Set<string>> => {
    const wanted = discounts.filter((d) => d.scope === scope).map((d) => d.code);
    if (wanted.length === 0) return new Set();
    if (scope === "service") return new Set(serviceCodes);
    const rows =
      scope === "network"
        ? await db.select({ code: networks.code }).from(networks).where(inArray(networks.code, wanted))
        : await db.select({ code: products.code }).from(products).where(inArray(products.code, wanted));
    return new Set(rows.map((row) => row.code));
  };
  const known = { service: await keysOf("service"), network: await keysOf("network"), product: await keysOf("product") };
  const what = { service: "service", network: "network, disco or biller", product: "product code" };
  const errors: FieldError[] = [];
  const seen = new Map<string, number>();
  discounts.forEach((discount, index) => {
    const id = `${discount.scope}\u0000${discount.code}`;
    const first = seen.get(id);
    if (first !== undefined) {
      errors.push({ field: `discounts[${index}]`, message: `repeats discounts[${first}] (${discount.scope} ${discount.code})` });
    } else seen.set(id, index);
    if (!known[discount.scope].has(discount.code)) {
      errors.push({ field: `discounts[${index}].code`, message: `is not a known ${what[discount.scope]}` });
    }
  });
  return errors;
}

async function replaceDiscounts(tx: Executor, plan: string, discounts: readonly PriceDiscount[]): Promise<void> {
  await tx.delete(pricePlanDiscounts).where(eq(pricePlanDiscounts.plan, plan));
  if (discounts.length === 0) return;
  await tx
    .insert(pricePlanDiscounts)
    .values(discounts.map((d) => ({ plan, scope: d.scope, key: d.code, discountBps: d.discount_bps })));
}

/** A new plan (no accounts yet); a name that exists is 409, an unknown or repeated discount code 400. */
export async function createPricePlan(db: Executor, body: PricePlanCreate): Promise<PricePlan> {
  return withTransaction(db, async (tx) => {
    const discounts = body.discounts ?? [];
    const errors = await discountErrors(tx, discounts);
    if (errors.length > 0) throw validationError(errors);
    const [row] = await tx
      .insert(pricePlans)
      .values({ name: body.name, description: body.description ?? "" })
      .onConflictDoNothing()
      .returning();
    if (!row) throw new AppError("CONFLICT", `A price plan named ${body.name} exists already`);
    await replaceDiscounts(tx, body.name, discounts);
    return readPlan(tx, body.name);
  });
}

const sameDiscounts = (a: readonly PriceDiscount[], b: readonly PriceDiscount[]): boolean => {
  const canonical = (list: readonly PriceDiscount[]) =>
    JSON.stringify([...list].sort(byScopeThenKey).map((d) => [d.scope, d.code, d.discount_bps]));
  return canonical(a) === canonical(b);
};

/** The active and inactive products, for working out what a plan change does to each. */
const allProducts = (tx: Executor) => tx.select().from(products);

/**
 * An operator's edit of a plan: its description, and its discounts (the whole list replaced). When what an
 * account on the plan pays for a product changes, its accounts get `catalogue.updated` in the same
 * transaction. An edit that changes nothing writes nothing.
 */
export async function updatePricePlan(
  db: Executor,
  name: string,
  patch: PricePlanUpdate,
): Promise<{ before: PricePlan; after: PricePlan; discountsChanged: boolean }> {
  return withTransaction(db, async (tx) => {
    const [locked] = await tx.select().from(pricePlans).where(eq(pricePlans.name, name)).for("update");
    if (!locked) throw notFound(`Price plan ${name}`);
    const before = await readPlan(tx, name);
    if (patch.discounts) {
      const errors = await discountErrors(tx, patch.discounts);
      if (errors.length > 0) throw validationError(errors);
    }
    const discountsChanged = patch.discounts !== undefined && !sameDiscounts(before.discounts, patch.discounts);
    const describedAnew = patch.description !== undefined && patch.description !== before.description;
    if (!discountsChanged && !describedAnew) return { before, after: before, discountsChanged: false };
    const oldPricing = await loadPlanPricing(tx, name);
    if (discountsChanged && patch.discounts) await replaceDiscounts(tx, name, patch.discounts);
    const [updated] = await tx
      .update(pricePlans)
      .set({ description: patch.description, updatedAt: sql`now()` })
      .where(eq(pricePlans.name, name))
      .returning();
    if (!updated || !oldPricing) throw new Error("price plan update returned nothing");
    if (discountsChanged && patch.discounts) {
      const newPricing = planPricingOf(
        name,
        updated.updatedAt,
        patch.discounts.map((d) => ({ scope: d.scope, key: d.code, discountBps: d.discount_bps })),
      );
      await announcePlanChange(tx, await allProducts(tx), {
        before: oldPricing,
        after: newPricing,
        audience: { pricePlan: name },
        at: updated.updatedAt.toISOString(),
      });
    }
    return { before, after: await readPlan(tx, name), discountsChanged };
  });
}

/**
 * Moves an account to another plan: its next orders are priced by it. When that changes what the account
 * pays for a product, the account (only) gets `catalogue.updated` in the same transaction. An unknown plan
 * is 400 naming `plan`; a move to the account's own plan changes nothing.
 */
export async function setAccountPricePlan(db: Executor, accountId: string, planName: string) {
  return withTransaction(db, async (tx) => {
    const [account] = await tx.select().from(accounts).where(eq(accounts.id, accountId)).for("update");
    if (!account) throw notFound("Account");
    const target = await loadPlanPricing(tx, planName);
    if (!target) {
      throw validationError([{ field: "plan", message: `is not a price plan (GET /admin/v1/price-plans lists them)` }]);
    }
    const before = { price_plan: account.pricePlan };
    if (account.pricePlan === planName) return { before, account: await getAccountDetail(tx, accountId), changed: false };
    const current: PlanPricing | undefined = await loadPlanPricing(tx, account.pricePlan);
    if (!current) throw new Error(`account ${accountId} is on a missing plan`);
    const movedAt = await assignPricePlan(tx, accountId, planName);
    await announcePlanChange(tx, await allProducts(tx), {
      before: current,
      after: target,
      audience: { accountId },
      at: movedAt,
    });
    return { before, account: await getAccountDetail(tx, accountId), changed: true };
  });
}
