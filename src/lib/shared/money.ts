// Shared by the server and the CLI: pure (no database, configuration or feature code).
/** Kobo → "1250.50": two decimals, no digit grouping (as in `Insufficient wallet balance: available NGN 150.00`). */
export function formatNgn(kobo: number): string {
  const sign = kobo < 0 ? "-" : "";
  const abs = Math.abs(kobo);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}`;
}

/** What the wallet pays for `amountKobo` of a range product: face value less the discount rounded down to whole kobo. */
export function discountedPrice(amountKobo: number, discountBps: number): number {
  return amountKobo - Math.floor((amountKobo * discountBps) / 10_000);
}

/** A provider's naira figure ("12,345.50", 12345.5) in kobo; undefined when it is not one. */
export function nairaToKobo(value: unknown): number | undefined {
  const text = typeof value === "number" ? String(value) : typeof value === "string" ? value.trim().replaceAll(",", "") : "";
  return /^\d+(\.\d+)?$/.test(text) ? Math.round(Number(text) * 100) : undefined;
}
