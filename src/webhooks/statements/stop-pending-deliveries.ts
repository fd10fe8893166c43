import { type SQL, sql } from "drizzle-orm";
import type { components } from "../../../generated/openapi-types.ts";
import { queryRows, statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";

type EventType = components["schemas"]["EventType"];

export const stopPendingDeliveriesStatementName = "webhooks.stop_pending_deliveries";

/** Which pending deliveries to stop: an endpoint's (all but `except`, or those of types it no longer keeps), or one claimed delivery. */
export type StoppedDeliveries =
  | { endpointId: string; keepTypes?: readonly EventType[]; except?: string }
  | { deliveryId: string; lease: Date };

function stoppedWhere(target: StoppedDeliveries): SQL {
  if ("deliveryId" in target)
    return sql`id = ${target.deliveryId}::uuid and lease_expires_at = ${target.lease.toISOString()}::timestamptz`;
  const { endpointId, keepTypes, except } = target;
  const ofTypes = keepTypes
    ? sql` and event_id in (select id from events where type <> all (${sql.param([...keepTypes])}::text[]))`
    : sql``;
  const others = except ? sql` and id <> ${except}::uuid` : sql``;
  return sql`endpoint_id = ${endpointId}::uuid${ofTypes}${others}`;
}

/**
 * Marks pending deliveries failed with `reason` instead of sending them (an endpoint deleted, disabled or
 * unsubscribed). A send already in flight loses its lease and is not recorded over this; a claimed delivery
 * is stopped only while its claimer still holds the lease.
 */
export async function stopPendingDeliveries(db: Executor, target: StoppedDeliveries, reason: string): Promise<void> {
  await queryRows(
    db,
    sql`${statementLabel(stopPendingDeliveriesStatementName)}update webhook_deliveries
        set status = 'failed', last_error = ${reason}, next_attempt_at = null, lease_expires_at = null, updated_at = now()
        where status = 'pending' and ${stoppedWhere(target)}`,
  );
}
