import { integer, pgTable, text } from "drizzle-orm/pg-core";
import { serviceCodes } from "../../../generated/constants.ts";

export const networks = pgTable("networks", {
  code: text().primaryKey(),
  name: text().notNull(),
  service: text({ enum: serviceCodes }).notNull(),
  sortOrder: integer("sort_order").notNull().default(0),
});
