import { sql } from "drizzle-orm";
import { boolean, check, index, integer, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { meterTypes, productKinds, serviceCodes } from "../../../generated/constants.ts";
import { insertedAt, kobo } from "./columns.ts";
import { networks } from "./networks.ts";

export const products = pgTable(
  "products",
  {
    code: text().primaryKey(),
    id: uuid().notNull().unique().defaultRandom(),
    name: text().notNull(),
    service: text({ enum: serviceCodes }).notNull(),
    network: text()
      .notNull()
      .references(() => networks.code),
    kind: text({ enum: productKinds }).notNull(),
    priceKobo: kobo("price_kobo"),
    minAmountKobo: kobo("min_amount_kobo"),
    maxAmountKobo: kobo("max_amount_kobo"),
    discountBps: integer("discount_bps").notNull().default(0),
    requestedMb: integer("requested_mb"),
    validityDays: integer("validity_days"),
    meterType: text("meter_type", { enum: meterTypes }),
    active: boolean().notNull().default(true),
    sortOrder: integer("sort_order").notNull().default(0),
    updatedAt: insertedAt("updated_at"),
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
