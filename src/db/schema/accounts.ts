import { index, pgTable, text } from "drizzle-orm/pg-core";
import { modes } from "../../../generated/constants.ts";
import { createdAt, uuidPrimaryKey, uuidReference } from "./columns.ts";
import { pricePlans } from "./price-plans.ts";

export const accounts = pgTable(
  "accounts",
  {
    id: uuidPrimaryKey(),
    name: text().notNull(),
    pricePlan: text("price_plan")
      .notNull()
      .default("standard")
      .references(() => pricePlans.name),
    ...createdAt(),
  },
  (t) => [index("accounts_created_idx").on(t.createdAt.desc(), t.id.desc()), index("accounts_price_plan_idx").on(t.pricePlan)],
);

/** The owning account and the mode (test or live) of a row that belongs to one account's side. */
export const accountAndMode = () => ({
  accountId: uuidReference("account_id", () => accounts.id),
  mode: text({ enum: modes }).notNull(),
});
