import { index, integer, jsonb, pgTable } from "drizzle-orm/pg-core";
import { accountAndMode } from "./accounts.ts";
import { createdAt, timestampMs, uuidPrimaryKey } from "./columns.ts";

/** An order that did not become a transaction: its index in the batch and the error it got. */
export interface BatchRejection {
  index: number;
  client_reference: string | null;
  status: number;
  error: { code: string; message: string; data: unknown };
}

/** A bulk order: its orders are ordinary transactions with `batch_id`; refused and invalid ones are kept here. */
export const vendBatches = pgTable(
  "vend_batches",
  {
    id: uuidPrimaryKey(),
    ...accountAndMode(),
    orderCount: integer("order_count").notNull(),
    rejections: jsonb().$type<BatchRejection[]>().notNull().default([]),
    ...createdAt(),
    /** Set, once, when every order is final and `batch.completed` was emitted. */
    completedAt: timestampMs("completed_at"),
  },
  (t) => [index("vend_batches_listing_idx").on(t.accountId, t.mode, t.createdAt.desc(), t.id.desc())],
);
