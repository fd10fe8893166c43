import { pgTable, text } from "drizzle-orm/pg-core";
import { createdAt } from "./columns.ts";

/** Instance-wide values shared by every process on one database (e.g. the generated cursor secret). */
export const settings = pgTable("settings", {
  key: text().primaryKey(),
  value: text().notNull(),
  ...createdAt(),
});
