import { integer, pgTable, text } from "drizzle-orm/pg-core";

export const networks = pgTable("networks", {
  code: text("code").primaryKey(),
  name: text("name").notNull(),
  service: text("service", { enum: ["airtime", "data", "cable", "electricity"] }).notNull(),
  sortOrder: integer("sort_order").notNull().default(0),
});
