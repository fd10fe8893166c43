import { formatNgn } from "../src/lib/shared/money.ts";
import { UsageError } from "./errors.ts";

const ngnPattern = /^(\d{1,12})(?:\.(\d{1,2}))?$/;

/** "500", "500.5" or "500.50" naira → kobo, by string arithmetic so no float ever rounds. */
export function parseNgn(input: string, flag = "amount"): number {
  const match = ngnPattern.exec(input.trim());
  if (!match) throw new UsageError(`${flag} must be an amount in NGN such as 500 or 500.50, got "${input}"`);
  const naira = Number(match[1]);
  const kobo = Number((match[2] ?? "").padEnd(2, "0"));
  const total = naira * 100 + kobo;
  if (total <= 0) throw new UsageError(`${flag} must be more than zero`);
  return total;
}

/** Kobo → "19,000.00": two decimals, thousands separated, for tables. */
export function formatNgnGrouped(kobo: number): string {
  const [whole = "", fraction = ""] = formatNgn(kobo).split(".");
  return `${whole.replace(/\B(?=(\d{3})+$)/g, ",")}.${fraction}`;
}
