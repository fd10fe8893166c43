import { index, pgTable, uuid } from "drizzle-orm/pg-core";
import { timestampMs } from "./columns.ts";

/**
 * The work queue of orders (migration 0014): one row per unfinished transaction a worker will claim again
 * (queued, processing, pending with a re-query scheduled), due at `due_at`. Rows leave when the order
 * becomes final or its re-queries stop, so the table stays as small as the backlog and a claim reads only
 * what is due, never the history of `transactions` (whose status changes would otherwise leave dead
 * entries for every claim to walk). `due_at` is a hint that is never later than the order is claimable;
 * the claim's guard on `transactions` decides (see src/orders/statements/claim-due.ts).
 */
export const transactionQueue = pgTable(
  "transaction_queue",
  {
    transactionId: uuid("transaction_id").primaryKey(),
    /** The transaction's `created_at`: with the id, its primary key (and its partition, once partitioned). */
    createdAt: timestampMs("created_at").notNull(),
    dueAt: timestampMs("due_at").notNull(),
  },
  (t) => [index("transaction_queue_due_idx").on(t.dueAt)],
);
