import { sql } from "drizzle-orm";
import { boolean, check, index, integer, pgTable, primaryKey, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { anomalyKinds } from "../../../generated/constants.ts";
import { insertedAt, kobo, oneOf, timestampMs, uuidPrimaryKey } from "./columns.ts";

export const providerAttemptStatuses = ["sent", "pending", "unknown", "successful", "failed", "not_received"] as const;

/**
 * Every provider an order was sent to, with the request id it was sent under (its own per provider; a
 * re-send to the same provider reuses it, so the provider refuses it as a duplicate) and its last answer.
 * Written before the send (in the claim or the failover statement), so a crash never hides where an order went.
 */
export const providerAttempts = pgTable(
  "provider_attempts",
  {
    id: uuidPrimaryKey(),
    /** A transaction's id; no foreign key (transactions may be partitioned): written from its row in the claim. */
    transactionId: uuid("transaction_id").notNull(),
    provider: text().notNull(),
    requestId: text("request_id").notNull(),
    status: text({ enum: providerAttemptStatuses }).notNull(),
    message: text(),
    providerReference: text("provider_reference"),
    sentAt: insertedAt("sent_at", "clock"),
    answeredAt: timestampMs("answered_at"),
    /** How long the provider took to answer the vend (not re-queries). */
    answerMs: integer("answer_ms"),
    /**
     * What the provider charges our float for this order (face value less its commission), fixed when the
     * attempt is recorded, before the send; null on attempts recorded before costs were kept.
     */
    costKobo: kobo("cost_kobo"),
  },
  (t) => [
    uniqueIndex("provider_attempts_transaction_idx").on(t.transactionId, t.provider),
    uniqueIndex("provider_attempts_request_idx").on(t.provider, t.requestId),
    index("provider_attempts_stats_idx").on(t.provider, t.sentAt),
    check("provider_attempts_status", oneOf(t.status, providerAttemptStatuses)),
  ],
);

/** Operators' switch per provider (persisted, followed by every process) and its last reported float. */
export const providerStates = pgTable("provider_states", {
  provider: text().primaryKey(),
  enabled: boolean().notNull().default(true),
  disabledReason: text("disabled_reason"),
  disabledAt: timestampMs("disabled_at"),
  balanceKobo: kobo("balance_kobo"),
  balanceCheckedAt: timestampMs("balance_checked_at"),
  updatedAt: insertedAt("updated_at"),
});

/**
 * Circuit breakers as last changed by any process (`service` '' is the provider-wide one): a process that
 * opens or closes one writes it here, and every process adopts an open breaker it reads.
 */
export const providerBreakers = pgTable(
  "provider_breakers",
  {
    provider: text().notNull(),
    service: text().notNull(),
    state: text({ enum: ["closed", "open", "half_open"] }).notNull(),
    consecutiveFailures: integer("consecutive_failures").notNull(),
    openUntil: timestampMs("open_until"),
    updatedAt: insertedAt("updated_at", "clock"),
  },
  (t) => [primaryKey({ columns: [t.provider, t.service] })],
);

/** What operators must look at (GET /admin/v1/anomalies); append-only. */
export const providerAnomalies = pgTable(
  "provider_anomalies",
  {
    id: uuid().primaryKey(),
    kind: text({ enum: anomalyKinds }).notNull(),
    provider: text().notNull(),
    /** A transaction's id, when there is one; no foreign key (transactions may be partitioned). */
    transactionId: uuid("transaction_id"),
    reference: text(),
    message: text().notNull(),
    createdAt: insertedAt("created_at", "clock"),
  },
  (t) => [
    index("provider_anomalies_listing_idx").on(t.createdAt.desc(), t.id.desc()),
    // A repeated callback about the same double delivery records it once.
    uniqueIndex("provider_anomalies_once_idx").on(t.kind, t.provider, t.reference).where(sql`${t.reference} is not null`),
    check("provider_anomalies_kind", oneOf(t.kind, anomalyKinds)),
  ],
);

/**
 * Every float a provider reported (the balance task), oldest first per provider. Consecutive samples are
 * reconciled against top-ups and attempt costs; `reconciledAt` marks the pair (previous, this) done, so its
 * anomaly is raised once.
 */
export const providerFloatSamples = pgTable(
  "provider_float_samples",
  {
    id: uuidPrimaryKey(),
    provider: text().notNull(),
    balanceKobo: kobo("balance_kobo").notNull(),
    sampledAt: insertedAt("sampled_at", "clock"),
    reconciledAt: timestampMs("reconciled_at"),
  },
  (t) => [index("provider_float_samples_walk_idx").on(t.provider, t.sampledAt)],
);

/** Money an operator put on a provider's float (POST /admin/v1/providers/{name}/float-topups); append-only. */
export const providerFloatTopups = pgTable(
  "provider_float_topups",
  {
    id: uuidPrimaryKey(),
    provider: text().notNull(),
    amountKobo: kobo("amount_kobo").notNull(),
    note: text().notNull(),
    /** When the money reached the provider (defaults to when it was recorded). */
    occurredAt: timestampMs("occurred_at").notNull(),
    createdAt: insertedAt("created_at", "clock"),
  },
  (t) => [
    index("provider_float_topups_walk_idx").on(t.provider, t.occurredAt),
    check("provider_float_topups_amount", sql`${t.amountKobo} > 0`),
  ],
);
