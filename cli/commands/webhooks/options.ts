import { InvalidArgumentError } from "commander";
import { type EventType, eventTypes } from "../../../generated/constants.ts";

/** --events: a comma-separated list of event types, or `all` (commander cannot hold null: the caller maps it). */
export function parseEventTypes(value: string): EventType[] | "all" {
  if (value.trim() === "all") return "all";
  const types = value
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);
  if (types.length === 0) throw new InvalidArgumentError(`expected event types (${eventTypes.join(", ")}) or all`);
  const unknown = types.filter((type) => !(eventTypes as readonly string[]).includes(type));
  if (unknown.length > 0)
    throw new InvalidArgumentError(`unknown event type ${unknown.join(", ")}; one of ${eventTypes.join(", ")}`);
  return [...new Set(types)] as EventType[];
}

const units: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** --overlap: seconds, or a number with s, m, h or d (`90s`, `30m`, `24h`, `7d`); at most 7 days. */
export function parseOverlap(value: string): number {
  const match = /^(\d+)([smhd]?)$/.exec(value.trim());
  const seconds = match ? Number(match[1]) * (units[match[2] || "s"] ?? 1) : Number.NaN;
  if (!Number.isSafeInteger(seconds) || seconds > 604_800) {
    throw new InvalidArgumentError("expected a duration up to 7d, such as 0, 90s, 30m, 24h or 7d");
  }
  return seconds;
}
