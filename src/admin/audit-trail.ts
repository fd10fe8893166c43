import { and, eq, gte, lte } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { readNewestFirst } from "../db/keyset.ts";
import { auditEntries } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import type { CursorCodec, Page } from "../lib/cursor.ts";
import type { AdminAction } from "../lib/scope.ts";

type AuditEntry = components["schemas"]["AuditEntry"];
type AuditRow = typeof auditEntries.$inferSelect;

/** Fields whose values are secrets shown once (API keys, operator tokens, signing secrets): never stored. */
const secretFields = new Set(["key", "token", "secret"]);

/** `value` with every secret field replaced by "[redacted]", at any depth. */
export function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [
        k,
        secretFields.has(k) ? "[redacted]" : withoutSecrets(v),
      ]),
    );
  }
  return value;
}

/** Writes the audit entry of one admin change (secret fields of before and after redacted). */
export async function recordAudit(db: Executor, record: AdminAction): Promise<void> {
  await db.insert(auditEntries).values({
    operatorId: record.operator.operatorId,
    operatorName: record.operator.name,
    action: record.action,
    targetType: record.target.type,
    targetId: record.target.id,
    requestId: record.requestId,
    before: record.before === undefined ? null : withoutSecrets(record.before),
    after: record.after === undefined ? null : withoutSecrets(record.after),
    note: record.note ?? null,
  });
}

const presentAuditEntry = (row: AuditRow): AuditEntry => ({
  id: String(row.id),
  created_at: row.createdAt.toISOString(),
  operator_id: row.operatorId,
  operator: row.operatorName,
  action: row.action,
  target_type: row.targetType,
  target_id: row.targetId,
  request_id: row.requestId,
  before: row.before ?? null,
  after: row.after ?? null,
  note: row.note,
});

export interface AuditFilters {
  operator?: string;
  action?: string;
  target_id?: string;
  from?: string;
  to?: string;
}

export async function listAuditEntries(
  db: Executor,
  cursors: CursorCodec,
  query: AuditFilters & { cursor?: string; limit?: number },
): Promise<Page<AuditEntry>> {
  const { cursor: _cursor, limit: _limit, ...filters } = query;
  const conditions = [
    filters.operator ? eq(auditEntries.operatorName, filters.operator) : undefined,
    filters.action ? eq(auditEntries.action, filters.action) : undefined,
    filters.target_id ? eq(auditEntries.targetId, filters.target_id) : undefined,
    filters.from ? gte(auditEntries.createdAt, new Date(filters.from)) : undefined,
    filters.to ? lte(auditEntries.createdAt, new Date(filters.to)) : undefined,
  ];
  const request = { cursors, scope: "audit", filters, query, conditions: [and(...conditions)] };
  return readNewestFirst(db, auditEntries, "createdAt", request, (rows) => rows.map(presentAuditEntry));
}
