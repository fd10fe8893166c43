import { sql } from "drizzle-orm";
import { index, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { timestampMs } from "./columns.ts";

export const accounts = pgTable(
  "accounts",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    name: text("name").notNull(),
    createdAt: timestampMs("created_at").notNull().default(sql`now()`),
  },
  (t) => [index("accounts_created_idx").on(t.createdAt.desc(), t.id.desc())],
);
