import { integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { timestampMs } from "./columns.ts";

/** Requests counted per subject (an API key) and fixed window, shared by every API process on the database. */
export const rateLimitWindows = pgTable(
  "rate_limit_windows",
  {
    subject: text().notNull(),
    windowStart: timestampMs("window_start").notNull(),
    used: integer().notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.subject, t.windowStart] })],
);
