import { sql } from "drizzle-orm";
import { check, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { transactionStatuses } from "../../../generated/constants.ts";
import { accountAndMode } from "./accounts.ts";
import { createdAndUpdatedAt, kobo, timestampMs } from "./columns.ts";

/**
 * Partition-ready (migration 0012): the primary key and the reference's uniqueness include `created_at`, the
 * key `vend partition` ranges it by month on; nothing holds a foreign key to it (see src/db/partition-references.ts).
 */
export const transactions = pgTable(
  "transactions",
  {
    id: uuid().notNull().defaultRandom(),
    reference: text().notNull(),
    ...accountAndMode(),
    status: text({ enum: transactionStatuses }).notNull(),
    productCode: text("product_code").notNull(),
    network: text().notNull(),
    service: text().notNull(),
    destination: text().notNull(),
    amountKobo: kobo("amount_kobo").notNull(),
    priceKobo: kobo("price_kobo").notNull(),
    metadata: jsonb().$type<Record<string, string>>().notNull().default({}),
    clientReference: text("client_reference"),
    /** The bulk order (`vend_batches`) the transaction came in; also in metadata as `batch_id`. */
    batchId: uuid("batch_id"),
    /** The provider the order is with now (the last it was sent to). */
    provider: text().notNull(),
    /** The request id it was sent to that provider under; null: the reference (the first provider's). */
    providerRequestId: text("provider_request_id"),
    providerReference: text("provider_reference"),
    attempts: integer().notNull().default(0),
    /** Orders sent to the provider, counted before each send so a crash can only overcount (bounds re-sends). */
    providerSends: integer("provider_sends").notNull().default(0),
    leaseOwner: text("lease_owner"),
    leaseExpiresAt: timestampMs("lease_expires_at"),
    nextAttemptAt: timestampMs("next_attempt_at"),
    failureReason: text("failure_reason"),
    /** W3C `traceparent` of the request that accepted the order, so its processing and webhooks join that trace. */
    traceContext: text("trace_context"),
    /** When the order was raised to operators as stuck (pending past STUCK_AFTER_MINUTES); raised once. */
    stuckRaisedAt: timestampMs("stuck_raised_at"),
    ...createdAndUpdatedAt("clock"),
    completedAt: timestampMs("completed_at"),
  },
  (t) => [
    primaryKey({ columns: [t.id, t.createdAt] }),
    // Unique across partitions by construction: the service makes references with 143 random bits (newReference, src/orders/accept-vends.ts).
    uniqueIndex("transactions_reference_idx").on(t.reference, t.createdAt),
    // Listing: a btree per selective filter, in keyset order; the filter leads so the admin search (no account)
    // uses it too. status, network and service have few values: a page of them walks the listing index.
    index("transactions_listing_idx").on(t.accountId, t.mode, t.createdAt.desc(), t.id.desc()),
    index("transactions_admin_listing_idx").on(t.createdAt.desc(), t.id.desc()),
    index("transactions_destination_listing_idx").on(t.destination, t.accountId, t.mode, t.createdAt.desc(), t.id.desc()),
    index("transactions_batch_listing_idx").on(t.batchId, t.createdAt.desc(), t.id.desc()).where(sql`${t.batchId} is not null`),
    // `text_pattern_ops` so `like 'prefix%'` is an index range whatever the database's collation.
    index("transactions_client_reference_listing_idx")
      .on(t.clientReference.op("text_pattern_ops"), t.accountId, t.mode, t.createdAt.desc(), t.id.desc())
      .where(sql`${t.clientReference} is not null`),
    // Destination substring search (`like '%digits%'`, 5 digits or more); needs pg_trgm.
    index("transactions_destination_trgm_idx").using("gin", t.destination.op("gin_trgm_ops")),
    // "The number ending 4567": a search of exactly 4 digits matches the last four, newest first from the
    // index for one account and mode (a substring of 4 digits is in ~0.08% of numbers, each on a page of its own).
    index("transactions_destination_last4_idx").on(
      sql`right(${t.destination}, 4)`,
      t.accountId,
      t.mode,
      t.createdAt.desc(),
      t.id.desc(),
    ),
    // No index names `status` (nor the lease or re-query columns), so a claim or a move to pending, which change
    // only those, is a HOT update: no index entry is written for it (the table keeps room on each page for it,
    // migration 0014). Open orders (stuck ones: pending, oldest first) and finished ones are told by `completed_at`.
    index("transactions_open_idx").on(t.createdAt).where(sql`${t.completedAt} is null`),
    // Settlement report: finished orders per provider and day (the successful ones are filtered on the row).
    index("transactions_settlement_idx").on(t.provider, t.completedAt).where(sql`${t.completedAt} is not null`),
    check("transactions_price_nonneg", sql`${t.priceKobo} >= 0 and ${t.amountKobo} > 0`),
  ],
);
