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

/** Kobo → "1250.50": two decimals, no digit grouping (as the API's own messages). */
export function formatNgn(kobo: number): string {
  const sign = kobo < 0 ? "-" : "";
  const abs = Math.abs(kobo);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}`;
}

/** What the wallet pays for `amountKobo` of a range product: the discount is rounded down to whole kobo. */
export function discountedPrice(amountKobo: number, discountBps: number): number {
  return amountKobo - Math.floor((amountKobo * discountBps) / 10_000);
}
