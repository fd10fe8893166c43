import { type Command, InvalidArgumentError } from "commander";

const plainDate = /^(\d{4})-(\d{2})-(\d{2})$/;
const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
const example = "expected a date such as 2026-11-22 (local time) or an RFC 3339 time such as 2026-11-22T08:00:00+01:00";

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** An instant as RFC 3339 in the local time zone (TZ), e.g. 2026-11-22T00:00:00+01:00. */
export function localRfc3339(date: Date): string {
  const offset = -date.getTimezoneOffset();
  const sign = offset < 0 ? "-" : "+";
  const zone = `${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  const ms = date.getMilliseconds() === 0 ? "" : `.${pad(date.getMilliseconds(), 3)}`;
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}${ms}${zone}`
  );
}

/** Local midnight of a YYYY-MM-DD date, `days` later; undefined when it is no calendar date. */
function localDay(value: string, days: number): Date | undefined {
  const match = plainDate.exec(value);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(year, month - 1, day);
  if (date.getFullYear() !== year || date.getMonth() !== month - 1 || date.getDate() !== day) return undefined;
  date.setDate(date.getDate() + days);
  return date;
}

function parseTime(value: string, edge: "start" | "end"): string {
  if (rfc3339.test(value) && !Number.isNaN(Date.parse(value))) return value;
  const start = localDay(value, edge === "start" ? 0 : 1);
  if (!start) throw new InvalidArgumentError(example);
  return localRfc3339(edge === "start" ? start : new Date(start.getTime() - 1));
}

/** --from: an RFC 3339 time as given, or a plain date as the start of that day in local time. */
export const parseFrom = (value: string): string => parseTime(value, "start");

/** --to: an RFC 3339 time as given, or a plain date as the end of that day in local time (the whole day included). */
export const parseTo = (value: string): string => parseTime(value, "end");

/** --from and --to, on every list that filters by time. */
export function addDateRange(command: Command, what = "created "): Command {
  return command
    .option("--from <date|time>", `${what}at or after: 2026-11-22 (start of that day, local time) or RFC 3339`, parseFrom)
    .option("--to <date|time>", `${what}at or before: 2026-11-22 (end of that day, included) or RFC 3339`, parseTo);
}
