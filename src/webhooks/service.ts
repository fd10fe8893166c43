import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import type { PrivateUrlsSetting } from "../config.ts";
import { readNewestFirst } from "../db/keyset.ts";
import { events, webhookDeliveries, webhookEndpoints } from "../db/schema/index.ts";
import { type Executor, withTransaction } from "../db/transaction.ts";
import { notFound } from "../errors.ts";
import { scheduleEventDeliveries } from "../ledger/outbox.ts";
import type { CursorCodec, Page } from "../lib/cursor.ts";
import type { Scope } from "../lib/scope.ts";
import { currentEndpointOf, presentEndpoint } from "./present.ts";
import { generateWebhookSecret } from "./secret.ts";
import { assertEndpointUrlAllowed, type HostResolver } from "./url-guard.ts";

type WebhookEndpoint = components["schemas"]["WebhookEndpoint"];
type WebhookEndpointCreated = components["schemas"]["WebhookEndpointCreated"];
type WebhookEndpointCreateRequest = components["schemas"]["WebhookEndpointCreateRequest"];
type EventDelivery = components["schemas"]["EventDelivery"];
type EventType = components["schemas"]["EventType"];
export type Event = components["schemas"]["Event"];
type EventRow = typeof events.$inferSelect;

export { generateWebhookSecret } from "./secret.ts";

/** Registers an endpoint after the URL guard; the secret is returned here and never again. */
export async function createWebhookEndpoint(
  db: Executor,
  scope: Scope,
  input: WebhookEndpointCreateRequest,
  options: { allowPrivateUrls: PrivateUrlsSetting; resolveHost?: HostResolver },
): Promise<WebhookEndpointCreated> {
  await assertEndpointUrlAllowed(input.url, scope.mode, options);
  const secret = generateWebhookSecret();
  const [row] = await db
    .insert(webhookEndpoints)
    .values({
      accountId: scope.accountId,
      mode: scope.mode,
      url: input.url,
      description: input.description ?? null,
      secret,
      eventTypes: input.event_types ?? null,
      updatedAt: sql`now()`,
    })
    .returning();
  if (!row) throw new Error("webhook endpoint insert returned no row");
  return { ...presentEndpoint(row), secret };
}

/** The scope's endpoints that are not deleted, oldest first; no secrets. */
export async function listWebhookEndpoints(db: Executor, scope: Scope): Promise<WebhookEndpoint[]> {
  const rows = await db
    .select()
    .from(webhookEndpoints)
    .where(currentEndpointOf(scope))
    .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id));
  return rows.map(presentEndpoint);
}

/** One of the scope's endpoints; `404` for anyone else's or a deleted one. */
export async function getWebhookEndpoint(db: Executor, scope: Scope, id: string): Promise<WebhookEndpoint> {
  const [row] = await db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), currentEndpointOf(scope)))
    .limit(1);
  if (!row) throw notFound("Webhook endpoint");
  return presentEndpoint(row);
}

/** Soft-deletes the scope's endpoint and stops its pending deliveries; `404` for anyone else's. */
export function deleteWebhookEndpoint(db: Executor, scope: Scope, id: string): Promise<{ id: string; deleted: true }> {
  return withTransaction(db, async (tx) => {
    const [row] = await tx
      .update(webhookEndpoints)
      .set({ deletedAt: sql`now()` })
      .where(and(eq(webhookEndpoints.id, id), currentEndpointOf(scope)))
      .returning({ id: webhookEndpoints.id });
    if (!row) throw notFound("Webhook endpoint");
    await tx
      .update(webhookDeliveries)
      .set({ status: "failed", lastError: "endpoint deleted", nextAttemptAt: null, leaseExpiresAt: null, updatedAt: sql`now()` })
      .where(and(eq(webhookDeliveries.endpointId, id), eq(webhookDeliveries.status, "pending")));
    return { id: row.id, deleted: true as const };
  });
}

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
    const [found] = await tx
      .select()
      .from(events)
      .where(and(eq(events.id, id), eq(events.accountId, scope.accountId), eq(events.mode, scope.mode)))
      .limit(1);
    if (!found) throw notFound("Event");
    await scheduleEventDeliveries(tx, found, { reset: true });
    return found;
  });
  const [presented] = await presentEvents(db, [row]);
  if (!presented) throw new Error("event vanished while presenting");
  return presented;
}
