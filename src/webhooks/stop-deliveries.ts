import { and, eq, inArray, ne, notInArray, type SQL, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { events, webhookDeliveries } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";

type EventType = components["schemas"]["EventType"];

/** Which pending deliveries to stop: an endpoint's (all but `except`, or those of types it no longer keeps), or one claimed delivery. */
export type StoppedDeliveries =
  | { endpointId: string; keepTypes?: readonly EventType[]; except?: string }
  | { deliveryId: string; lease: Date };

const d = webhookDeliveries;

function stoppedWhere(db: Executor, target: StoppedDeliveries): SQL | undefined {
  if ("deliveryId" in target) return and(eq(d.id, target.deliveryId), eq(d.leaseExpiresAt, target.lease));
  const { endpointId, keepTypes, except } = target;
  const ofTypes = keepTypes
    ? inArray(
        d.eventId,
        db
          .select({ id: events.id })
          .from(events)
          .where(notInArray(events.type, [...keepTypes])),
      )
    : undefined;
  return and(eq(d.endpointId, endpointId), ofTypes, except ? ne(d.id, except) : undefined);
}

/**
 * Marks pending deliveries failed with `reason` instead of sending them (an endpoint deleted, disabled or
 * unsubscribed). A send already in flight loses its lease and is not recorded over this; a claimed delivery
 * is stopped only while its claimer still holds the lease.
 */
export async function stopPendingDeliveries(db: Executor, target: StoppedDeliveries, reason: string): Promise<void> {
  await db
    .update(d)
    .set({ status: "failed", lastError: reason, nextAttemptAt: null, leaseExpiresAt: null, updatedAt: sql`now()` })
    .where(and(eq(d.status, "pending"), stoppedWhere(db, target)));
}
