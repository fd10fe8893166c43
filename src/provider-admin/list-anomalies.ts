import { and, eq } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { readNewestFirst } from "../db/keyset.ts";
import { providerAnomalies } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import type { CursorCodec, Page } from "../lib/cursor.ts";

type Anomaly = components["schemas"]["Anomaly"];
type AnomalyRow = typeof providerAnomalies.$inferSelect;

const presentAnomaly = (row: AnomalyRow): Anomaly => ({
  id: row.id,
  kind: row.kind,
  provider: row.provider,
  reference: row.reference,
  message: row.message,
  created_at: row.createdAt.toISOString(),
});

export function listAnomalies(
  db: Executor,
  cursors: CursorCodec,
  query: { kind?: AnomalyRow["kind"]; provider?: string; cursor?: string; limit?: number },
): Promise<Page<Anomaly>> {
  const filters = { kind: query.kind, provider: query.provider };
  const conditions = [
    query.kind ? eq(providerAnomalies.kind, query.kind) : undefined,
    query.provider ? eq(providerAnomalies.provider, query.provider) : undefined,
  ];
  const request = { cursors, scope: "anomalies", filters, query, conditions: [and(...conditions)] };
  return readNewestFirst(db, providerAnomalies, "createdAt", request, (rows) => rows.map(presentAnomaly));
}
