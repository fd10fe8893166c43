import { type SQL, sql } from "drizzle-orm";
import { type AnyPgColumn, bigint, bigserial, timestamp, uuid } from "drizzle-orm/pg-core";

// A column is given its SQL name only where that differs from its key (`productCode: text("product_code")`).

/** Money in kobo: bigint in the database, number in code (amounts stay far below 2^53). */
export const kobo = (name: string) => bigint(name, { mode: "number" });

/** Millisecond precision so a JS Date round-trips exactly (keyset cursors depend on it). */
export const timestampMs = (name: string) => timestamp(name, { withTimezone: true, precision: 3, mode: "date" });

/** A random uuid primary key. */
export const uuidPrimaryKey = () => uuid().primaryKey().defaultRandom();

/** An increasing bigint primary key, read as a number. */
export const serialPrimaryKey = () => bigserial({ mode: "number" }).primaryKey();

/** A required uuid that references another table's row. */
export const uuidReference = (name: string, target: () => AnyPgColumn) => uuid(name).notNull().references(target);

/**
 * Set on insert: `now` is the start of the writing transaction; `clock` is `clock_timestamp()`, the moment
 * of the row's own insert, so rows written by one transaction still differ and keep their order.
 */
export type InsertClock = "now" | "clock";

/** A required time set on insert. */
export const insertedAt = (name: string, clock: InsertClock = "now") =>
  timestampMs(name)
    .notNull()
    .default(clock === "now" ? sql`now()` : sql`clock_timestamp()`);

/** `created_at`, set on insert. */
export const createdAt = (clock: InsertClock = "now") => ({ createdAt: insertedAt("created_at", clock) });

/** `created_at` and `updated_at`, both set on insert. */
export const createdAndUpdatedAt = (clock: InsertClock = "now") => ({
  createdAt: insertedAt("created_at", clock),
  updatedAt: insertedAt("updated_at", clock),
});

/** A check that `column` holds one of `values`: `<column> in ('a', 'b')`. */
export const oneOf = (column: AnyPgColumn, values: readonly string[]): SQL =>
  sql`${column} in (${sql.raw(values.map((value) => `'${value}'`).join(", "))})`;
