import type { components } from "../../generated/openapi-types.ts";
import type { Executor } from "../db/transaction.ts";
import { enqueueSubscribedEvents } from "../ledger/outbox.ts";

type Product = components["schemas"]["Product"];
type ProductChange = components["schemas"]["CatalogueProductChange"];
type CatalogueUpdated = components["schemas"]["CatalogueUpdated"];

/** What a client sees of a product and an operator can change; `updated_at` moves when one of them does. */
const visibleFields = ["name", "price_kobo", "min_amount_kobo", "max_amount_kobo", "discount_bps", "active"] as const;

/** The fields whose change is announced by `catalogue.updated`: price, range, discount, availability. */
const announcedFields = ["price_kobo", "min_amount_kobo", "max_amount_kobo", "discount_bps", "active"] as const;
type AnnouncedField = (typeof announcedFields)[number];

/** True when `patch` would change anything a client sees of `before`. */
export function changesAnything(before: Product, patch: Partial<Pick<Product, (typeof visibleFields)[number]>>): boolean {
  return visibleFields.some((field) => patch[field] !== undefined && patch[field] !== before[field]);
}

/** The announced fields that differ between `before` and `after`, with their previous values; null when none do. */
export function announcedChange(before: Product, after: Product): ProductChange | null {
  const changes: AnnouncedField[] = announcedFields.filter((field) => before[field] !== after[field]);
  if (changes.length === 0) return null;
  const previous = {
    price_kobo: before.price_kobo,
    min_amount_kobo: before.min_amount_kobo,
    max_amount_kobo: before.max_amount_kobo,
    discount_bps: before.discount_bps,
    active: before.active,
  };
  return { product: after, changes, previous };
}

/**
 * Sends `catalogue.updated` for these product changes on `tx`, so the event commits with them: one event per
 * account and mode with an enabled endpoint subscribed to it. Nothing when there is no change. Returns how
 * many events were recorded.
 */
export async function announceCatalogueChanges(tx: Executor, changes: ProductChange[]): Promise<number> {
  const latest = changes
    .map((change) => change.product.updated_at)
    .sort()
    .at(-1);
  if (latest === undefined) return 0;
  const data: CatalogueUpdated = { products: changes, updated_at: latest };
  return enqueueSubscribedEvents(tx, { type: "catalogue.updated", data });
}
