import { eq, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { products } from "../db/schema/index.ts";
import { type Executor, withTransaction } from "../db/transaction.ts";
import { type FieldError, notFound, validationError } from "../errors.ts";
import { loadAllPlanPricing } from "../orders/plan-pricing.ts";
import type { ProductRow } from "../orders/product-cache.ts";
import { presentProduct } from "./catalogue-listing.ts";
import { announceProductEdits, changesAnything } from "./changes.ts";

type Product = components["schemas"]["Product"];
type ProductUpdate = components["schemas"]["ProductUpdateRequest"];

function updateErrors(row: ProductRow, patch: ProductUpdate): FieldError[] {
  const errors: FieldError[] = [];
  if (row.kind === "range" && patch.price_kobo !== undefined) {
    errors.push({
      field: "price_kobo",
      message: "can only be set on a fixed-price product; range products are priced by discount_bps",
    });
  }
  if (row.kind === "fixed") {
    for (const field of ["min_amount_kobo", "max_amount_kobo"] as const) {
      if (patch[field] !== undefined) errors.push({ field, message: "can only be set on a range product" });
    }
    if (patch.discount_bps !== undefined && patch.discount_bps !== 0) {
      errors.push({ field: "discount_bps", message: "applies only to range products; change price_kobo instead" });
    }
    return errors;
  }
  const min = patch.min_amount_kobo ?? row.minAmountKobo;
  const max = patch.max_amount_kobo ?? row.maxAmountKobo;
  if (min !== null && max !== null && min > max) {
    if (patch.min_amount_kobo !== undefined) {
      errors.push({ field: "min_amount_kobo", message: `must not be greater than max_amount_kobo (${max})` });
    }
    if (patch.max_amount_kobo !== undefined) {
      errors.push({ field: "max_amount_kobo", message: `must not be less than min_amount_kobo (${min})` });
    }
  }
  return errors;
}

interface UpdatedProduct {
  before: Product;
  after: Product;
  changed: boolean;
}

/** One product's edit on `tx`, its row locked; its rows before and after (to announce), none when nothing moved. */
async function editProduct(
  tx: Executor,
  code: string,
  patch: ProductUpdate,
): Promise<UpdatedProduct & { rows?: { before: ProductRow; after: ProductRow } }> {
  const [row] = await tx.select().from(products).where(eq(products.code, code)).for("update");
  if (!row) throw notFound(`Product ${code}`);
  const errors = updateErrors(row, patch);
  if (errors.length > 0) throw validationError(errors);
  const before = presentProduct(row);
  if (!changesAnything(before, patch)) return { before, after: before, changed: false };
  const [updated] = await tx
    .update(products)
    .set({
      name: patch.name,
      priceKobo: patch.price_kobo,
      discountBps: patch.discount_bps,
      active: patch.active,
      minAmountKobo: patch.min_amount_kobo,
      maxAmountKobo: patch.max_amount_kobo,
      updatedAt: sql`now()`,
    })
    .where(eq(products.code, code))
    .returning();
  if (!updated) throw new Error("product update returned nothing");
  return { before, after: presentProduct(updated), changed: true, rows: { before: row, after: updated } };
}

/**
 * Operator edit of one product, answered with the product before and after; unknown code is 404, an edit
 * that does not fit the product's kind is 400. An edit that changes nothing writes nothing (`updated_at`
 * stays); a change of price, range, discount or availability sends `catalogue.updated` in the same
 * transaction, to each plan's accounts as they see the product (none where their plan's discount hides it).
 */
export async function updateProduct(db: Executor, code: string, patch: ProductUpdate): Promise<UpdatedProduct> {
  const [updated] = await updateProducts(db, [{ code, patch }]);
  if (!updated) throw new Error("product update returned nothing");
  return updated;
}

/**
 * Several edits as one: all in one transaction (any refusal changes none), each as `updateProduct` makes it, and
 * one `catalogue.updated` carrying every announced change.
 */
export async function updateProducts(
  db: Executor,
  edits: readonly { code: string; patch: ProductUpdate }[],
): Promise<UpdatedProduct[]> {
  return withTransaction(db, async (tx) => {
    const results = [];
    for (const { code, patch } of edits) results.push(await editProduct(tx, code, patch));
    const edited = results.flatMap((result) => (result.rows ? [result.rows] : []));
    if (edited.length > 0) await announceProductEdits(tx, await loadAllPlanPricing(tx), edited);
    return results.map(({ before, after, changed }) => ({ before, after, changed }));
  });
}
