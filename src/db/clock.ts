import { sql } from "drizzle-orm";
import { randomBase62 } from "../lib/random.ts";

/**
 * The one clock of stored instants: the database's. A statement stamps what it writes with `storedNow`
 * (the start of its transaction, at the millisecond precision every timestamp column keeps), never with
 * the process's clock, so rows written by different processes (or machines) order by one clock.
 */
export const storedNow = sql.raw("date_trunc('milliseconds', now())");

/** `storedNow` as the API shows an instant (`Date.prototype.toISOString`). */
export const storedNowIso = sql.raw(
  `to_char(date_trunc('milliseconds', now()) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
);

/**
 * A stand-in for `storedNow` in text the process renders before the statement runs (an answer, an event's
 * payload): random, so no client-given value can match it, and as long as an ISO instant, so the text's size
 * is its final size. The statement puts the instant in with `replace(text, token, ${storedNowIso})`.
 */
export const newInstantToken = (): string => `@${randomBase62(22)}@`;
