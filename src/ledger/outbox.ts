import { type SQL, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { webhookDueChannel } from "../db/channels.ts";
import { newInstantToken, storedNow, storedNowIso } from "../db/clock.ts";
import { type Cte } from "../db/cte.ts";
import { queryRows } from "../db/rows.ts";
import type { Executor } from "../db/transaction.ts";
import { randomBase62 } from "../lib/random.ts";
import type { Mode } from "../lib/scope.ts";

type Transaction = components["schemas"]["Transaction"];
type EventType = components["schemas"]["EventType"];

export interface OutboxEvent {
  id: string;
  type: "transaction.successful" | "transaction.failed";
  /**
   * Stands for the event's creation time (the database clock, see `newInstantToken`) in the payload until
   * the statement that writes it puts the instant in.
   */
  createdAt: string;
  /** What webhooks carry: the event with the transaction as the API shows it. */
  payload: {
    id: string;
    type: "transaction.successful" | "transaction.failed";
    created_at: string;
    mode: Mode;
    data: Transaction;
  };
}

/**
 * The `transaction.successful|failed` event for a final transaction, given as the API shows it; its
 * `created_at` is `createdAt`, by default a new stand-in for the database clock.
 */
export function buildTransactionEvent(transaction: Transaction, createdAt = newInstantToken()): OutboxEvent {
  const id = `evt_${randomBase62(24)}`;
  const type = transaction.status === "successful" ? "transaction.successful" : "transaction.failed";
  return { id, type, createdAt, payload: { id, type, created_at: createdAt, mode: transaction.mode, data: transaction } };
}

/** The transaction an event reports. */
export interface EventSubject {
  accountId: string;
  mode: Mode;
  transactionId: string;
}

/**
 * The outbox as parts of a single statement. `parts` is `event as (…), deliveries as (…)`: the
 * event row (only if the subject has a row) and one pending delivery, due now, per current
 * endpoint of its account and mode. `notify` is a select-list expression for the caller's final
 * select: a NOTIFY on `webhookDueChannel`, delivered on commit, when a delivery was scheduled.
 */
export interface EmittedEvent {
  parts: SQL;
  notify: SQL;
}

/**
 * Whether the endpoint `alias` is subscribed to events of `type` (an SQL expression): no subscription list
 * means every type. The one subscription rule for scheduling, claiming and resending; the low-balance
 * trigger (migration 0009) holds a copy in plpgsql.
 */
export const subscribedTo = (alias: string, type: SQL): SQL =>
  sql`(${sql.raw(alias)}.event_types is null or ${type} = any (${sql.raw(alias)}.event_types))`;

/** Whether the endpoint `alias` gets events of `type` now: not deleted, enabled and subscribed to it. */
export const receives = (alias: string, type: SQL): SQL =>
  sql`${sql.raw(alias)}.deleted_at is null and ${sql.raw(alias)}.enabled and ${subscribedTo(alias, type)}`;

/** A NOTIFY on `webhookDueChannel`, once for the statement, when its `deliveries` CTE scheduled any. */
const notifyAnyDue = sql`(select pg_notify(${webhookDueChannel}, min(event_id)) from deliveries having count(*) > 0)`;

/** What scheduling does with an endpoint's existing delivery of the event: a new event has none. */
type ExistingDelivery = "none" | "keep" | "reset";

/**
 * The assignments that start a delivery over (a redelivery): pending and due now, its attempt count and last
 * result cleared, its lease dropped.
 */
export const deliveryStartsOver = sql`status = 'pending', attempts = 0, next_attempt_at = now(), lease_expires_at = null,
      last_status_code = null, last_error = null, updated_at = now()`;

const onConflict: Record<ExistingDelivery, SQL> = {
  none: sql``,
  keep: sql` on conflict (event_id, endpoint_id) do nothing`,
  reset: sql` on conflict (event_id, endpoint_id) do update set ${deliveryStartsOver}`,
};

/**
 * `deliveries as (…)`: one pending delivery, due now, per current endpoint of the account and mode
 * of each event row in `eventRows` (`id`, `account_id`, `mode`, `type`) that is enabled and subscribed
 * to the event's type (no subscription list: every type). An existing delivery for the same
 * endpoint is kept as it is or, with `reset`, starts over (pending, attempt count and last result
 * cleared, lease dropped).
 */
function scheduleDeliveries(eventRows: SQL, existing: ExistingDelivery): SQL {
  return sql`deliveries as (
      insert into webhook_deliveries (event_id, endpoint_id, status, next_attempt_at)
      select event.id, e.id, 'pending', now() from ${eventRows}
      join webhook_endpoints e on e.account_id = event.account_id and e.mode = event.mode
        and ${receives("e", sql`event.type`)}${onConflict[existing]}
      returning event_id
    )`;
}

const notifyDue = (eventId: string) =>
  sql`(select pg_notify(${webhookDueChannel}, ${eventId}) where exists (select 1 from deliveries))`;

/** The event row, its deliveries and their wake-up, for the caller to compose into its statement. */
export function emitEvent(event: OutboxEvent, subject: EventSubject): EmittedEvent {
  const payload = JSON.stringify(event.payload);
  const parts = sql`event as (
      insert into events (id, account_id, mode, type, transaction_id, payload, created_at)
      select ${event.id}, ${subject.accountId}::uuid, ${subject.mode}, ${event.type}, ${subject.transactionId}::uuid,
             replace(${payload}, ${event.createdAt}, ${storedNowIso})::jsonb, ${storedNow}
      returning id, account_id, mode, type
    ), ${scheduleDeliveries(sql`event`, "none")}`;
  return { parts, notify: notifyDue(event.id) };
}

/**
 * Records the event of an already-final transaction (as the API shows it) and schedules its
 * deliveries, in one statement. Completion writes its event inside its own statement; this is for
 * everything else that needs an event for a transaction (fixtures, tools).
 */
export async function enqueueTransactionEvent(tx: Executor, accountId: string, transaction: Transaction): Promise<string> {
  const event = buildTransactionEvent(transaction);
  const emitted = emitEvent(event, { accountId, mode: transaction.mode, transactionId: transaction.id });
  await queryRows(tx, sql`with ${emitted.parts} select ${emitted.notify} as webhooks_due`);
  return event.id;
}

/**
 * Schedules an existing event for every current endpoint of its account and mode, due now, and
 * wakes the delivery loop, in one statement. With `reset` (a redelivery), an existing delivery for
 * the same endpoint starts over; without it, it is left as it is.
 */
export async function scheduleEventDeliveries(
  tx: Executor,
  event: { id: string; accountId: string; mode: Mode },
  options: { reset: boolean } = { reset: false },
): Promise<void> {
  const eventRows = sql`(select id, account_id, mode, type from events where id = ${event.id}) event`;
  await queryRows(
    tx,
    sql`with ${scheduleDeliveries(eventRows, options.reset ? "reset" : "keep")} select ${notifyDue(event.id)} as webhooks_due`,
  );
}

/** The events of transactions, one per row: its id, type and payload, the transaction (`id`) and its account and mode. */
export type TransactionEvents = Cte<"event_id" | "event_type" | "payload" | "account_id" | "mode" | "id">;

/**
 * The events of several transactions as parts of one statement: for each row of the caller's CTE `events`
 * (`payload` jsonb) its event row, created now (the database clock), and one pending delivery per current
 * endpoint of its account and mode. `notify` wakes delivery ONCE for the whole statement, when any delivery
 * was scheduled.
 */
export function emitEach(events: TransactionEvents): EmittedEvent {
  const parts = sql`event as (
      insert into events (id, account_id, mode, type, transaction_id, payload, created_at)
      select event_id, account_id, mode, event_type, id, payload, ${storedNow} from ${events.name}
      returning id, account_id, mode, type
    ), ${scheduleDeliveries(sql`event`, "none")}`;
  return { parts, notify: notifyAnyDue };
}

/** An event about something other than one transaction: a batch, the wallet, the catalogue, an endpoint. */
export interface AccountEvent {
  accountId: string;
  mode: Mode;
  type: Exclude<EventType, "transaction.successful" | "transaction.failed">;
  data: Record<string, unknown>;
}

/**
 * Records an account event and schedules its deliveries (endpoints subscribed to its type), in one
 * statement on `tx`, so it commits or rolls back with the change it reports. Returns the event id.
 */
export async function enqueueAccountEvent(tx: Executor, event: AccountEvent): Promise<string> {
  const id = `evt_${randomBase62(24)}`;
  const createdAt = newInstantToken();
  const payload = JSON.stringify({ id, type: event.type, created_at: createdAt, mode: event.mode, data: event.data });
  await queryRows(
    tx,
    sql`with event as (
      insert into events (id, account_id, mode, type, transaction_id, payload, created_at)
      values (${id}, ${event.accountId}::uuid, ${event.mode}, ${event.type}, null,
              replace(${payload}, ${createdAt}, ${storedNowIso})::jsonb, ${storedNow})
      returning id, account_id, mode, type
    ), ${scheduleDeliveries(sql`event`, "none")} select ${notifyDue(id)} as webhooks_due`,
  );
  return id;
}

/** An event about something every account sees alike (the catalogue): its type and `data`. */
export interface SharedEvent {
  type: Exclude<EventType, "transaction.successful" | "transaction.failed">;
  data: Record<string, unknown>;
}

/** Which accounts an event is for: every account, the accounts on one price plan, or one account. */
export type Audience = { everyone: true } | { pricePlan: string } | { accountId: string };

const audienceFilter = (audience: Audience): SQL =>
  "pricePlan" in audience
    ? sql`and e.account_id in (select a.id from accounts a where a.price_plan = ${audience.pricePlan})`
    : "accountId" in audience
      ? sql`and e.account_id = ${audience.accountId}::uuid`
      : sql``;

/**
 * Records `event` once for every account (of `audience`) and mode that has an enabled endpoint subscribed
 * to its type (no subscription list: every type), each with its own id, and schedules its deliveries, in
 * one statement on `tx`, however many accounts there are. Accounts with no such endpoint get no event.
 * Returns how many events were recorded.
 */
export async function enqueueSubscribedEvents(
  tx: Executor,
  event: SharedEvent,
  audience: Audience = { everyone: true },
): Promise<number> {
  const data = JSON.stringify(event.data);
  // 32 random bytes in base64 without `+/=` keep about 40 base62 characters; the id takes 24.
  const newId = sql`'evt_' || substr(translate(encode(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()), 'base64'), '+/=', ''), 1, 24)`;
  const [row] = await queryRows<{ events: number }>(
    tx,
    sql`with subscriber as (
      select e.account_id, e.mode, ${newId} as id from (
        select distinct account_id, mode from webhook_endpoints e
        where ${receives("e", sql`${event.type}::text`)} ${audienceFilter(audience)}
      ) e
    ), event as (
      insert into events (id, account_id, mode, type, transaction_id, payload, created_at)
      select s.id, s.account_id, s.mode, ${event.type}, null,
             jsonb_build_object('id', s.id, 'type', ${event.type}::text, 'created_at', ${storedNowIso}, 'mode', s.mode,
                                'data', ${data}::jsonb),
             ${storedNow}
      from subscriber s
      returning id, account_id, mode, type
    ), ${scheduleDeliveries(sql`event`, "none")}
    select (select count(*) from event)::int as events,
           ${notifyAnyDue} as webhooks_due`,
  );
  return Number(row?.events ?? 0);
}
