import { index, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { insertedAt, serialPrimaryKey } from "./columns.ts";

/**
 * Append-only record of every admin action that changed something: who (the operator, or the bootstrap
 * `ADMIN_TOKEN`), what (the operation and its target), when, under which request id, and the state
 * before and after where the action has one. A trigger (migration 0007) refuses updates and deletes.
 */
export const auditEntries = pgTable(
  "audit_entries",
  {
    id: serialPrimaryKey(),
    createdAt: insertedAt("created_at", "clock"),
    /** Null for the bootstrap `ADMIN_TOKEN`. */
    operatorId: uuid("operator_id"),
    operatorName: text("operator_name").notNull(),
    action: text().notNull(),
    targetType: text("target_type").notNull(),
    targetId: text("target_id").notNull(),
    requestId: text("request_id").notNull(),
    before: jsonb(),
    after: jsonb(),
    note: text(),
  },
  (t) => [
    index("audit_entries_created_idx").on(t.createdAt.desc(), t.id.desc()),
    index("audit_entries_target_idx").on(t.targetType, t.targetId, t.id.desc()),
    index("audit_entries_operator_idx").on(t.operatorName, t.id.desc()),
  ],
);
