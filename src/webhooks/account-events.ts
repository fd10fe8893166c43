import { and, asc, eq, inArray } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { readNewestFirst } from "../db/keyset.ts";
import { events, webhookDeliveries } from "../db/schema/index.ts";
import { type Executor, withTransaction } from "../db/transaction.ts";
import { firstOrNotFound } from "../errors.ts";
import type { CursorCodec, Page } from "../lib/cursor.ts";
import type { Scope } from "../lib/scope.ts";
import { scheduleEventDeliveries } from "./statements/schedule-event.ts";

type EventDelivery = components["schemas"]["EventDelivery"];
type EventType = components["schemas"]["EventType"];
export type Event = components["schemas"]["Event"];
type EventRow = typeof events.$inferSelect;

async function presentEvents(db: Executor, rows: EventRow[]): Promise<Event[]> {
  const ids = rows.map((row) => row.id);
  const deliveries =
    ids.length === 0
      ? []
      : await db
          .select()
          .from(webhookDeliveries)
          .where(inArray(webhookDeliveries.eventId, ids))
          .orderBy(asc(webhookDeliveries.createdAt), asc(webhookDeliveries.endpointId));
  const byEvent = new Map<string, EventDelivery[]>();
  for (const d of deliveries) {
    const list = byEvent.get(d.eventId) ?? [];
    list.push({
      endpoint_id: d.endpointId,
      status: d.status,
      attempts: d.attempts,
      last_status_code: d.lastStatusCode,
      last_error: d.lastError,
      next_attempt_at: d.nextAttemptAt?.toISOString() ?? null,
    });
    byEvent.set(d.eventId, list);
  }
  return rows.map((row) => ({
    id: row.id,
    type: row.type,
    created_at: row.createdAt.toISOString(),
    mode: row.mode,
    data: row.payload.data as Event["data"],
    deliveries: byEvent.get(row.id) ?? [],
  }));
}

export interface ListEventsQuery {
  type?: EventType;
  cursor?: string;
  limit?: number;
}

/** One page of the scope's events, newest first by `(created_at, id)`, each with its deliveries. */
export async function listEvents(db: Executor, cursors: CursorCodec, scope: Scope, query: ListEventsQuery): Promise<Page<Event>> {
  const conditions = [
    eq(events.accountId, scope.accountId),
    eq(events.mode, scope.mode),
    query.type === undefined ? undefined : eq(events.type, query.type),
  ];
  const request = { cursors, scope: `events:${scope.accountId}:${scope.mode}`, filters: { type: query.type }, query, conditions };
  return readNewestFirst(db, events, "createdAt", request, (rows) => presentEvents(db, rows));
}

/** Schedules the scope's event for every current endpoint again, due now; `404` for anyone else's event. */
export async function resendEvent(db: Executor, scope: Scope, id: string): Promise<Event> {
  const row = await withTransaction(db, async (tx) => {
    const inScope = and(eq(events.id, id), eq(events.accountId, scope.accountId), eq(events.mode, scope.mode));
    const found = await firstOrNotFound(tx.select().from(events).where(inScope).limit(1), "Event");
    await scheduleEventDeliveries(tx, found, { reset: true });
    return found;
  });
  const [presented] = await presentEvents(db, [row]);
  if (!presented) throw new Error("event vanished while presenting");
  return presented;
}
