import { sql } from "drizzle-orm";
import { check, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { accounts } from "./accounts.ts";
import { kobo, timestampMs } from "./columns.ts";

export const transactionStatuses = [
  "created",
  "queued",
  "processing",
  "pending",
  "successful",
  "failed",
  "reversed",
  "refunded",
] as const;

export const transactions = pgTable(
  "transactions",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    reference: text("reference").notNull(),
    accountId: uuid("account_id")
      .notNull()
      .references(() => accounts.id),
    mode: text("mode", { enum: ["test", "live"] }).notNull(),
    status: text("status", { enum: transactionStatuses }).notNull(),
    productCode: text("product_code").notNull(),
    network: text("network").notNull(),
    service: text("service").notNull(),
    destination: text("destination").notNull(),
    amountKobo: kobo("amount_kobo").notNull(),
    priceKobo: kobo("price_kobo").notNull(),
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    clientReference: text("client_reference"),
    provider: text("provider").notNull(),
    providerReference: text("provider_reference"),
    attempts: integer("attempts").notNull().default(0),
    /** Orders sent to the provider, counted before each send so a crash can only overcount (bounds re-sends). */
    providerSends: integer("provider_sends").notNull().default(0),
    leaseOwner: text("lease_owner"),
    leaseExpiresAt: timestampMs("lease_expires_at"),
    nextAttemptAt: timestampMs("next_attempt_at"),
    failureReason: text("failure_reason"),
    createdAt: timestampMs("created_at").notNull().default(sql`clock_timestamp()`),
    updatedAt: timestampMs("updated_at").notNull().default(sql`clock_timestamp()`),
    completedAt: timestampMs("completed_at"),
  },
  (t) => [
    uniqueIndex("transactions_reference_idx").on(t.reference),
    index("transactions_listing_idx").on(t.accountId, t.mode, t.createdAt.desc(), t.id.desc()),
    index("transactions_admin_listing_idx").on(t.createdAt.desc(), t.id.desc()),
    index("transactions_work_idx").on(t.nextAttemptAt).where(sql`${t.status} in ('queued', 'processing', 'pending')`),
    check("transactions_price_nonneg", sql`${t.priceKobo} >= 0 and ${t.amountKobo} > 0`),
  ],
);
