import { integer, pgTable, text } from "drizzle-orm/pg-core";
import { serviceCodes } from "../../../generated/constants.ts";

export const services = pgTable("services", {
  code: text({ enum: serviceCodes }).primaryKey(),
  name: text().notNull(),
  sortOrder: integer("sort_order").notNull().default(0),
});
