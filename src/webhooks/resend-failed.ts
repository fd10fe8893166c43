import { sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { webhookDueChannel } from "../db/channels.ts";
import { queryRows } from "../db/rows.ts";
import type { Executor } from "../db/transaction.ts";
import { notFound, validationError } from "../errors.ts";
import { deliveryStartsOver, receives } from "../ledger/outbox.ts";
import type { Scope } from "../lib/scope.ts";

type ResendRequest = components["schemas"]["FailedDeliveriesResendRequest"];
type ResendResult = components["schemas"]["FailedDeliveriesResend"];

/** Most failed deliveries one request schedules again. */
export const maxResendFailed = 1000;

/**
 * Schedules again, due now, the scope's failed deliveries of events created in `[from, to]` (optionally
 * to one endpoint), oldest event first, at most `maxResendFailed`, to endpoints that are current,
 * enabled and subscribed to the event's type. Only `failed` rows change, so a repeated request never
 * sends anything twice. One statement: picked, reset, counted, and the delivery loop woken.
 */
export async function resendFailedDeliveries(db: Executor, scope: Scope, input: ResendRequest): Promise<ResendResult> {
  const from = new Date(input.from);
  const to = new Date(input.to);
  if (from > to) throw validationError([{ field: "from", message: "must not be after to" }]);
  const endpointId = input.endpoint_id ?? null;
  if (endpointId) {
    const [found] = await queryRows<{ id: string }>(
      db,
      sql`select id from webhook_endpoints where id = ${endpointId}::uuid and account_id = ${scope.accountId}::uuid
          and mode = ${scope.mode} and deleted_at is null`,
    );
    if (!found) throw notFound("Webhook endpoint");
  }
  const [row] = await queryRows<{ scheduled: number | string; matched: number | string }>(
    db,
    sql`with candidates as (
          select d.id, ev.created_at, ev.id as event_id
          from events ev
          join webhook_deliveries d on d.event_id = ev.id and d.status = 'failed'
          join webhook_endpoints e on e.id = d.endpoint_id and ${receives("e", sql`ev.type`)}
          where ev.account_id = ${scope.accountId}::uuid and ev.mode = ${scope.mode}
            and ev.created_at >= ${from.toISOString()}::timestamptz and ev.created_at <= ${to.toISOString()}::timestamptz
            and (${endpointId}::uuid is null or d.endpoint_id = ${endpointId}::uuid)
          order by ev.created_at, ev.id, d.id
          limit ${maxResendFailed + 1}
        ),
        picked as (
          select d.id from webhook_deliveries d
          where d.id in (select id from candidates order by created_at, event_id, id limit ${maxResendFailed})
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
  const scheduled = Number(row?.scheduled ?? 0);
  return { scheduled, more: Number(row?.matched ?? 0) > maxResendFailed };
}
