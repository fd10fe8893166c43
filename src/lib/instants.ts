import { validationError } from "../errors.ts";

/**
 * An RFC 3339 `from`/`to` filter as a Date; `400` naming the field when it is not one. Times are stored with
 * millisecond precision, so an inclusive lower bound inside a millisecond starts at the next one.
 */
export function parseInstant(field: "from" | "to", value: string): Date {
  const millis = Date.parse(value);
  if (Number.isNaN(millis)) throw validationError([{ field, message: "must be a valid date-time" }]);
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
