import { formatNgn } from "../../src/lib/shared/money.ts";
import { UsageError } from "../errors.ts";
import type { Product } from "../views.ts";

/** The face values a product takes, in kobo, both ends included. */
export interface AmountRange {
  min: number;
  max: number;
}

/** An amount as a person would pass it to --amount: "500", or "500.50" when there are kobo. */
export const asAmountFlag = (kobo: number): string => (kobo % 100 === 0 ? String(kobo / 100) : formatNgn(kobo));

/** The range of a range product, raised to `floorKobo` when a verification sets a higher minimum; none for a fixed one. */
export function rangeOf(product: Product, floorKobo = 0): AmountRange | undefined {
  if (product.kind !== "range") return undefined;
  const min = Math.max(product.min_amount_kobo ?? 1, floorKobo);
  return { min, max: Math.max(min, product.max_amount_kobo ?? Number.MAX_SAFE_INTEGER) };
}

export const describeRange = (range: AmountRange): string =>
  range.max === Number.MAX_SAFE_INTEGER
    ? `at least NGN ${formatNgn(range.min)}`
    : `NGN ${formatNgn(range.min)} to NGN ${formatNgn(range.max)}`;

/** What is wrong with `kobo` for `range` ("at least NGN 50.00"), or undefined when it fits. */
export function outOfRange(range: AmountRange, kobo: number): string | undefined {
  if (kobo < range.min) return `at least NGN ${formatNgn(range.min)}`;
  if (kobo > range.max) return `at most NGN ${formatNgn(range.max)}`;
  return undefined;
}

/**
 * Refuses --amount (a usage error, before anything is sent) when the product would refuse it: outside a
 * range product's range, or not a fixed product's price (which --amount may simply leave out).
 */
export function checkAmountFlag(product: Product | undefined, amountKobo: number | undefined, floorKobo = 0): void {
  if (!product || amountKobo === undefined) return;
  const price = product.price_kobo;
  if (product.kind === "fixed") {
    if (price !== null && amountKobo !== price) {
      throw new UsageError(
        `${product.name} costs NGN ${formatNgn(price)}; leave out --amount (or pass --amount ${asAmountFlag(price)})`,
      );
    }
    return;
  }
  const range = rangeOf(product, floorKobo);
  if (range && outOfRange(range, amountKobo)) {
    throw new UsageError(`--amount ${asAmountFlag(amountKobo)} is out of range: ${product.name} takes ${describeRange(range)}`);
  }
}
