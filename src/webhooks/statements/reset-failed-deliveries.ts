import { sql } from "drizzle-orm";
import { webhookDueChannel } from "../../db/channels.ts";
import { queryRows, statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";
import type { Scope } from "../../lib/scope.ts";
import { deliveryStartsOver } from "./schedule-deliveries.ts";

export const resetFailedDeliveriesStatementName = "webhooks.reset_failed_deliveries";

/** Which failed deliveries: the scope's, of events created in `[from, to]`, to one endpoint or any. */
export interface FailedDeliveries {
  from: Date;
  to: Date;
  endpointId: string | null;
  /** Most deliveries one statement starts over. */
  limit: number;
}

/** How many deliveries started over, and how many matched (up to `limit + 1`, so more than `limit` says there are more). */
export interface ResetFailedRow {
  scheduled: number | string;
  matched: number | string;
}

/**
 * Starts over, due now, the scope's failed deliveries of `which`, oldest event first, at most `limit`, to the
 * endpoints that get the event now (`vend_webhook_endpoints_for`, migration 0020: current, enabled, subscribed
 * to its type). Only `failed` rows change, so a repeated request never sends anything twice. One statement:
 * picked, reset, counted, and the delivery loop woken.
 */
export async function resetFailedDeliveries(db: Executor, scope: Scope, which: FailedDeliveries): Promise<ResetFailedRow> {
  const [row] = await queryRows<ResetFailedRow>(
    db,
    sql`${statementLabel(resetFailedDeliveriesStatementName)}with candidates as (
          select d.id, ev.created_at, ev.id as event_id
          from events ev
          join webhook_deliveries d on d.event_id = ev.id and d.status = 'failed'
          where ev.account_id = ${scope.accountId}::uuid and ev.mode = ${scope.mode}
            and ev.created_at >= ${which.from.toISOString()}::timestamptz and ev.created_at <= ${which.to.toISOString()}::timestamptz
            and (${which.endpointId}::uuid is null or d.endpoint_id = ${which.endpointId}::uuid)
            and d.endpoint_id in (select r.endpoint_id from vend_webhook_endpoints_for(ev.account_id, ev.mode, ev.type) r)
          order by ev.created_at, ev.id, d.id
          limit ${which.limit + 1}
        ),
        picked as (
          select d.id from webhook_deliveries d
          where d.id in (select id from candidates order by created_at, event_id, id limit ${which.limit})
            and d.status = 'failed'
          for update skip locked
        ),
        reset as (
          update webhook_deliveries d
          set ${deliveryStartsOver}
          from picked where d.id = picked.id
          returning d.event_id
        )
        select (select count(*) from reset) as scheduled, (select count(*) from candidates) as matched,
               (select pg_notify(${webhookDueChannel}, min(event_id)) from reset having count(*) > 0) as webhooks_due`,
  );
  return row ?? { scheduled: 0, matched: 0 };
}
