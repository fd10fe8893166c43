import { and, eq, isNotNull, isNull, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { webhookEndpoints } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { disabledMessageOf, type EndpointRow } from "./endpoint-view.ts";
import { enqueueAccountEvent } from "./statements/record-account-event.ts";
import { stopPendingDeliveries } from "./statements/stop-pending-deliveries.ts";

type WebhookEndpointDisabled = components["schemas"]["WebhookEndpointDisabled"];

function disabledEventData(row: EndpointRow): WebhookEndpointDisabled {
  const disabledAt = row.disabledAt ?? new Date();
  return {
    endpoint_id: row.id,
    url: row.url,
    description: row.description,
    reason: "failing_deliveries",
    message: disabledMessageOf(row) ?? "Disabled automatically",
    failing_since: (row.failingSince ?? disabledAt).toISOString(),
    disabled_at: disabledAt.toISOString(),
  };
}

/**
 * Follows an endpoint's health after one attempt, on the attempt's transaction and before its delivery
 * row is touched (one lock order: endpoint, then deliveries). A success ends the failing run. A failure
 * starts one if none is running and, once the run is `disableAfterSeconds` old (0: never), disables the
 * endpoint: its other pending deliveries are stopped and `webhook_endpoint.disabled` goes to the
 * account's other endpoints. The guarded update disables once, however many attempts fail together.
 * Returns whether this attempt disabled the endpoint.
 */
export async function recordEndpointHealth(
  tx: Executor,
  attempt: { endpointId: string; deliveryId: string; succeeded: boolean },
  disableAfterSeconds: number,
): Promise<boolean> {
  const e = webhookEndpoints;
  if (attempt.succeeded) {
    await tx
      .update(e)
      .set({ failingSince: null })
      .where(and(eq(e.id, attempt.endpointId), isNotNull(e.failingSince)));
    return false;
  }
  await tx
    .update(e)
    .set({ failingSince: sql`now()` })
    .where(and(eq(e.id, attempt.endpointId), isNull(e.failingSince)));
  if (disableAfterSeconds <= 0) return false;
  const [disabled] = await tx
    .update(e)
    .set({ enabled: false, disabledReason: "failing_deliveries", disabledAt: sql`now()`, updatedAt: sql`now()` })
    .where(
      and(
        eq(e.id, attempt.endpointId),
        eq(e.enabled, true),
        isNull(e.deletedAt),
        sql`${e.failingSince} <= now() - ${disableAfterSeconds}::int * interval '1 second'`,
      ),
    )
    .returning();
  if (!disabled) return false;
  await stopPendingDeliveries(tx, { endpointId: disabled.id, except: attempt.deliveryId }, "endpoint disabled");
  await enqueueAccountEvent(tx, {
    accountId: disabled.accountId,
    mode: disabled.mode,
    type: "webhook_endpoint.disabled",
    data: { ...disabledEventData(disabled) },
  });
  return true;
}
