import type { components } from "../../generated/openapi-types.ts";
import type { Executor } from "../db/transaction.ts";
import type { PlanPricing } from "../orders/plan-pricing.ts";
import type { ProductRow } from "../orders/product-cache.ts";
import type { Audience } from "../webhooks/outbox.ts";
import { enqueueSubscribedEvents } from "../webhooks/statements/record-subscribed-events.ts";
import { presentProductOn } from "./catalogue-listing.ts";

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
 * account (of `audience`) and mode with an enabled endpoint subscribed to it. Nothing when there is no
 * change. Returns how many events were recorded.
 */
export async function announceCatalogueChanges(
  tx: Executor,
  changes: ProductChange[],
  audience: Audience = { everyone: true },
  updatedAt?: string,
): Promise<number> {
  const latest =
    updatedAt ??
    changes
      .map((change) => change.product.updated_at)
      .sort()
      .at(-1);
  if (latest === undefined || changes.length === 0) return 0;
  const data: CatalogueUpdated = { products: changes, updated_at: latest };
  return enqueueSubscribedEvents(tx, { type: "catalogue.updated", data }, audience);
}

/**
 * Operators' product edits (one, or a catalogue sync's several) as each plan's accounts see them: per plan, ONE
 * `catalogue.updated` with the announced change of each product on that plan (none where the plan's own
 * discount hides it), sent to that plan's accounts only. Returns how many events were recorded.
 */
export async function announceProductEdits(
  tx: Executor,
  plans: readonly PlanPricing[],
  edits: readonly { before: ProductRow; after: ProductRow }[],
): Promise<number> {
  let events = 0;
  for (const plan of plans) {
    const changes = edits.flatMap(({ before, after }) => {
      const change = announcedChange(presentProductOn(plan, before), presentProductOn(plan, after));
      return change ? [change] : [];
    });
    if (changes.length > 0) events += await announceCatalogueChanges(tx, changes, { pricePlan: plan.name });
  }
  return events;
}

/**
 * The products (active ones: the catalogue's) whose discount differs between `before` and `after`, as an
 * account on `after` sees them, announced to `audience`: a plan's accounts when its discounts change, one
 * account when it moves to another plan. Returns how many events were recorded.
 */
export async function announcePlanChange(
  tx: Executor,
  products: readonly ProductRow[],
  change: { before: PlanPricing; after: PlanPricing; audience: Audience; at: string },
): Promise<number> {
  const { before, after } = change;
  const changes: ProductChange[] = [];
  for (const row of products) {
    if (!row.active) continue;
    const previous = presentProductOn(before, row);
    const now = presentProductOn(after, row);
    if (previous.discount_bps === now.discount_bps) continue;
    changes.push({
      product: now,
      changes: ["discount_bps"],
      previous: {
        price_kobo: previous.price_kobo,
        min_amount_kobo: previous.min_amount_kobo,
        max_amount_kobo: previous.max_amount_kobo,
        discount_bps: previous.discount_bps,
        active: previous.active,
      },
    });
  }
  return announceCatalogueChanges(tx, changes, change.audience, change.at);
}
