import { sql } from "drizzle-orm";
import { pgTable, text } from "drizzle-orm/pg-core";
import { timestampMs } from "./columns.ts";

/** Instance-wide values shared by every process on one database (e.g. the generated cursor secret). */
export const settings = pgTable("settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
  createdAt: timestampMs("created_at").notNull().default(sql`now()`),
});
