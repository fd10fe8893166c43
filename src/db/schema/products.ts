import { sql } from "drizzle-orm";
import { boolean, check, index, integer, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { kobo, timestampMs } from "./columns.ts";
import { networks } from "./networks.ts";

export const products = pgTable(
  "products",
  {
    code: text("code").primaryKey(),
    id: uuid("id").notNull().unique().defaultRandom(),
    name: text("name").notNull(),
    service: text("service", { enum: ["airtime", "data", "cable", "electricity"] }).notNull(),
    network: text("network")
      .notNull()
      .references(() => networks.code),
    kind: text("kind", { enum: ["fixed", "range"] }).notNull(),
    priceKobo: kobo("price_kobo"),
    minAmountKobo: kobo("min_amount_kobo"),
    maxAmountKobo: kobo("max_amount_kobo"),
    discountBps: integer("discount_bps").notNull().default(0),
    requestedMb: integer("requested_mb"),
    validityDays: integer("validity_days"),
    meterType: text("meter_type", { enum: ["prepaid", "postpaid"] }),
    active: boolean("active").notNull().default(true),
    sortOrder: integer("sort_order").notNull().default(0),
    updatedAt: timestampMs("updated_at").notNull().default(sql`now()`),
  },
  (t) => [
    index("products_network_idx").on(t.network, t.service),
    check("products_discount_range", sql`${t.discountBps} between 0 and 10000`),
    check(
      "products_kind_shape",
      sql`(${t.kind} = 'fixed' and ${t.priceKobo} is not null) or (${t.kind} = 'range' and ${t.minAmountKobo} is not null)`,
    ),
  ],
);
