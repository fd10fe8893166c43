import { sql } from "drizzle-orm";
import { check, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { priceDiscountScopes } from "../../../generated/constants.ts";
import { createdAndUpdatedAt, oneOf } from "./columns.ts";

/** Named price plans; every account is on one (`standard`, created by the migration, unless moved). */
export const pricePlans = pgTable("price_plans", {
  name: text().primaryKey(),
  description: text().notNull().default(""),
  ...createdAndUpdatedAt(),
});

/**
 * A plan's discount for a service, a network or a product (the most specific one a product matches wins;
 * with none, the product's own `discount_bps`).
 */
export const pricePlanDiscounts = pgTable(
  "price_plan_discounts",
  {
    plan: text()
      .notNull()
      .references(() => pricePlans.name, { onDelete: "cascade" }),
    scope: text({ enum: priceDiscountScopes }).notNull(),
    key: text().notNull(),
    discountBps: integer("discount_bps").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.plan, t.scope, t.key] }),
    check("price_plan_discounts_scope", oneOf(t.scope, priceDiscountScopes)),
    check("price_plan_discounts_range", sql`${t.discountBps} between 0 and 10000`),
  ],
);
