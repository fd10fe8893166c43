import { integer, pgTable, text } from "drizzle-orm/pg-core";

export const services = pgTable("services", {
  code: text("code", { enum: ["airtime", "data", "cable", "electricity"] }).primaryKey(),
  name: text("name").notNull(),
  sortOrder: integer("sort_order").notNull().default(0),
});
