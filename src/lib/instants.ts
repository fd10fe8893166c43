import { validationError } from "../errors.ts";

/** Instants the database takes as they are sent (a 4-digit year after 0; year 0 and beyond 9999 are spelled differently). */
const earliest = Date.parse("0001-01-01T00:00:00Z");
const latest = Date.parse("9999-12-31T23:59:59.999Z");

/**
 * An RFC 3339 `from`/`to` filter as a Date; `400` naming the field when it is not one, or is outside years
 * 1 to 9999 (UTC). Times are stored with millisecond precision, so an inclusive lower bound inside a
 * millisecond starts at the next one.
 */
export function parseInstant(field: "from" | "to", value: string): Date {
  const millis = Date.parse(value);
  if (Number.isNaN(millis)) throw validationError([{ field, message: "must be a valid date-time" }]);
  if (millis < earliest || millis > latest) {
    throw validationError([{ field, message: "must be between years 0001 and 9999 (UTC)" }]);
  }
  const beyondMillis = /[1-9]/.test(/\.\d{3}(\d+)/.exec(value)?.[1] ?? "");
  return new Date(field === "from" && beyondMillis ? millis + 1 : millis);
}

/** Both bounds of a `from`/`to` filter, each optional; `400` when `from` is after `to`. */
export function parseRange(from: string | undefined, to: string | undefined): { from?: Date; to?: Date } {
  const range = {
    from: from === undefined ? undefined : parseInstant("from", from),
    to: to === undefined ? undefined : parseInstant("to", to),
  };
  if (range.from && range.to && range.from > range.to) {
    throw validationError([{ field: "from", message: "must not be after to" }]);
  }
  return range;
}
