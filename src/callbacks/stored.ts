import { eq } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { readNewestFirst } from "../db/keyset.ts";
import { providerCallbacks } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { notFound } from "../errors.ts";
import type { CursorCodec, Page } from "../lib/cursor.ts";

type StoredCallback = components["schemas"]["StoredCallback"];
type Row = typeof providerCallbacks.$inferSelect;

function parsedBody(raw: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(raw);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export const presentStoredCallback = (row: Row): StoredCallback => ({
  id: row.id,
  provider: row.provider,
  reference: row.reference,
  event_id: row.eventId,
  received_at: row.receivedAt.toISOString(),
  http_status: row.httpStatus,
  result_code: row.resultCode,
  signature_valid: row.signatureValid,
  body: parsedBody(row.rawBody),
  replay_of: row.replayOf,
});

export async function findStoredCallback(db: Executor, id: string): Promise<Row> {
  const [row] = await db.select().from(providerCallbacks).where(eq(providerCallbacks.id, id));
  if (!row) throw notFound("Stored callback");
  return row;
}

export async function listStoredCallbacks(
  db: Executor,
  cursors: CursorCodec,
  query: { reference?: string; provider?: string; cursor?: string; limit?: number },
): Promise<Page<StoredCallback>> {
  const filters = { reference: query.reference, provider: query.provider };
  const conditions = [
    query.reference ? eq(providerCallbacks.reference, query.reference) : undefined,
    query.provider ? eq(providerCallbacks.provider, query.provider) : undefined,
  ];
  const request = { cursors, scope: "callbacks", filters, query, conditions };
  // Stored callbacks are ordered by `received_at`: that is their keyset position.
  return readNewestFirst(db, providerCallbacks, "receivedAt", request, (rows) => rows.map(presentStoredCallback));
}
