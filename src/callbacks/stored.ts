import { and, eq, type SQL } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { afterPosition, newestFirst } from "../db/keyset.ts";
import { providerCallbacks } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { notFound } from "../errors.ts";
import { type CursorCodec, type Page, pageLimit, toPage } from "../lib/cursor.ts";

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
  const limit = pageLimit(query.limit);
  const filters = { reference: query.reference, provider: query.provider };
  const conditions: SQL[] = [];
  if (query.reference) conditions.push(eq(providerCallbacks.reference, query.reference));
  if (query.provider) conditions.push(eq(providerCallbacks.provider, query.provider));
  if (query.cursor) {
    conditions.push(
      afterPosition(providerCallbacks.receivedAt, providerCallbacks.id, cursors.decode("callbacks", filters, query.cursor)),
    );
  }
  const rows = await db
    .select()
    .from(providerCallbacks)
    .where(and(...conditions))
    .orderBy(...newestFirst(providerCallbacks.receivedAt, providerCallbacks.id))
    .limit(limit + 1);
  // Stored callbacks are ordered by `received_at`: that is their keyset position.
  const positioned = rows.map((row) => ({ ...row, createdAt: row.receivedAt }));
  return toPage(positioned, limit, presentStoredCallback, (position) => cursors.encode("callbacks", filters, position));
}
