import { type SQL, sql } from "drizzle-orm";
import { storedNow, storedNowIso } from "../../db/clock.ts";
import { cte } from "../../db/cte.ts";
import { queryRows, statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";
import type { Audience, SharedEvent } from "../outbox.ts";
import { notifyAnyDue, scheduleDeliveries } from "./schedule-deliveries.ts";

export const recordSubscribedEventsStatementName = "webhooks.record_subscribed_events";

const event = cte("event", ["id", "account_id", "mode", "type"]);

const audienceFilter = (audience: Audience): SQL =>
  "pricePlan" in audience
    ? sql`and e.account_id in (select a.id from accounts a where a.price_plan = ${audience.pricePlan})`
    : "accountId" in audience
      ? sql`and e.account_id = ${audience.accountId}::uuid`
      : sql``;

/**
 * Records `sharedEvent` once for every account (of `audience`) and mode that has an endpoint getting its type
 * (the rule of `vend_webhook_endpoints_for`, as its deliveries), each with its own id, and schedules its
 * deliveries, in one statement on `tx`, however many accounts there are. Accounts with no such endpoint get no
 * event. Returns how many events were recorded.
 */
export async function enqueueSubscribedEvents(
  tx: Executor,
  sharedEvent: SharedEvent,
  audience: Audience = { everyone: true },
): Promise<number> {
  const data = JSON.stringify(sharedEvent.data);
  // 32 random bytes in base64 without `+/=` keep about 40 base62 characters; the id takes 24.
  const newId = sql`'evt_' || substr(translate(encode(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()), 'base64'), '+/=', ''), 1, 24)`;
  const [row] = await queryRows<{ events: number }>(
    tx,
    sql`${statementLabel(recordSubscribedEventsStatementName)}with subscriber as (
      select s.account_id, s.mode, ${newId} as id from (
        select distinct e.account_id, e.mode from webhook_endpoints e
        where e.id in (select r.endpoint_id from vend_webhook_endpoints_for(e.account_id, e.mode, ${sharedEvent.type}::text) r)
          ${audienceFilter(audience)}
      ) s
    ), ${event.name} as (
      insert into events (id, account_id, mode, type, transaction_id, payload, created_at)
      select s.id, s.account_id, s.mode, ${sharedEvent.type}, null,
             jsonb_build_object('id', s.id, 'type', ${sharedEvent.type}::text, 'created_at', ${storedNowIso}, 'mode', s.mode,
                                'data', ${data}::jsonb),
             ${storedNow}
      from subscriber s
      returning id, account_id, mode, type
    ), ${scheduleDeliveries(event, "none")}
    select (select count(*) from ${event.name})::int as events,
           ${notifyAnyDue} as webhooks_due`,
  );
  return Number(row?.events ?? 0);
}
