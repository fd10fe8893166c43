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
 * What the product would refuse about `amountKobo`, in the terms of where the amount came from (the --amount
 * flag or a bulk file's amount column): outside a range product's range, or not a fixed product's price (which
 * may simply be left out). Undefined when it fits, or when there is no product or amount to judge.
 */
export function amountProblem(
  product: Product | undefined,
  amountKobo: number | undefined,
  options: { floorKobo?: number; source?: "flag" | "column" } = {},
): string | undefined {
  if (!product || amountKobo === undefined) return undefined;
  const name = options.source === "column" ? "amount" : "--amount";
  const price = product.price_kobo;
  if (product.kind === "fixed") {
    if (price === null || amountKobo === price) return undefined;
    const fix =
      options.source === "column"
        ? `leave the amount empty (or write ${asAmountFlag(price)})`
        : `leave out --amount (or pass --amount ${asAmountFlag(price)})`;
    return `${product.name} costs NGN ${formatNgn(price)}; ${fix}`;
  }
  const range = rangeOf(product, options.floorKobo);
  if (!range || !outOfRange(range, amountKobo)) return undefined;
  return `${name} ${asAmountFlag(amountKobo)} is out of range: ${product.name} takes ${describeRange(range)}`;
}

/** Refuses --amount (a usage error, before anything is sent) when the product would refuse it (`amountProblem`). */
export function checkAmountFlag(product: Product | undefined, amountKobo: number | undefined, floorKobo = 0): void {
  const problem = amountProblem(product, amountKobo, { floorKobo });
  if (problem) throw new UsageError(problem);
}
