import { bigint, timestamp } from "drizzle-orm/pg-core";

/** Money in kobo: bigint in the database, number in code (amounts stay far below 2^53). */
export const kobo = (name: string) => bigint(name, { mode: "number" });

/** Millisecond precision so a JS Date round-trips exactly (keyset cursors depend on it). */
export const timestampMs = (name: string) => timestamp(name, { withTimezone: true, precision: 3, mode: "date" });
