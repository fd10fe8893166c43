import { type SQL, sql } from "drizzle-orm";
import type { Executor } from "../db/executor.ts";
import { queryRows } from "../db/rows.ts";
import type { RetentionKind } from "./retention-settings.ts";

/** Rows one statement deleted, by table; `main` is the kind's own table (a full batch means there may be more). */
export interface Deleted {
  main: number;
  byTable: Record<string, number>;
}

interface Statement {
  /** The kind's own table, the one its batch is counted in. */
  table: string;
  /** The delete of at most `limit` rows older than `cutoff`; answers `main` and a count per other table it cleared. */
  build(cutoff: SQL, limit: number): SQL;
  /** The other tables it deletes from first (foreign keys), as named in the statement's answer. */
  alsoFrom?: string[];
}

const finalTransaction = sql`('successful', 'failed', 'reversed', 'refunded')`;

/**
 * The rows a delivery's delete takes with it (its attempts), then the deliveries. The rows are locked with
 * SKIP LOCKED, so passes in several processes take different rows, and a delivery being sent is never taken.
 */
const deliveries = (status: "succeeded" | "failed"): Statement => ({
  table: "webhook_deliveries",
  alsoFrom: ["webhook_attempts"],
  build: (cutoff, limit) => sql`
    with doomed as (
      select id from webhook_deliveries
      where status = ${status} and status <> 'pending' and updated_at < ${cutoff}
      order by updated_at limit ${limit} for update skip locked),
    attempts as (delete from webhook_attempts a using doomed where a.delivery_id = doomed.id returning 1),
    gone as (delete from webhook_deliveries d using doomed where d.id = doomed.id returning 1)
    select (select count(*) from gone)::int as main, (select count(*) from attempts)::int as webhook_attempts`,
});

/**
 * The delete of a table's oldest rows (by `id`) older than the cutoff by one time column, `only` those matching
 * when given. `nullsFirst` orders as a listing index (`desc`, nulls last) read backwards, so that index serves it.
 */
const oldestRows = (table: string, timeColumn: string, options: { nullsFirst?: boolean; only?: SQL } = {}): Statement => ({
  table,
  build: (cutoff, limit) => {
    const [from, time] = [sql.raw(table), sql.raw(timeColumn)];
    const only = options.only ? sql`${options.only} and ` : sql``;
    const order = options.nullsFirst ? sql`${time} nulls first` : time;
    return sql`
      with doomed as (
        select id from ${from} where ${only}${time} < ${cutoff}
        order by ${order} limit ${limit} for update skip locked),
      gone as (delete from ${from} x using doomed where x.id = doomed.id returning 1)
      select count(*)::int as main from gone`;
  },
});

/**
 * One delete statement per kind, each through an index that starts at the oldest row and ends at the cutoff.
 * A listing index (`created_at desc`, nulls last) serves "oldest first" read backwards, which is `nulls first`:
 * without it the planner sorts the whole table instead (the columns are never null).
 * Money history has none: transactions, ledger entries, provider attempts, audit entries, batches, and
 * events a delivery still has to carry.
 */
export const statements: Record<RetentionKind, Statement> = {
  webhookAttempts: oldestRows("webhook_attempts", "attempted_at"),
  deliveredWebhooks: deliveries("succeeded"),
  failedWebhooks: deliveries("failed"),
  // Walks each account's side through the events listing index (account, mode, created_at): no index of its own
  // to write on every event for a setting that is off by default.
  deliveredEvents: {
    table: "events",
    alsoFrom: ["webhook_deliveries", "webhook_attempts"],
    build: (cutoff, limit) => sql`
      with doomed as (
        select old.id from accounts a cross join (values ('test'), ('live')) m(mode)
        cross join lateral (
          select e.id from events e
          where e.account_id = a.id and e.mode = m.mode and e.created_at < ${cutoff}
            and not exists (select 1 from webhook_deliveries p where p.event_id = e.id and p.status = 'pending')
          order by e.created_at nulls first limit ${limit} for update of e skip locked) old
        limit ${limit}),
      carried as (select d.id from webhook_deliveries d join doomed on d.event_id = doomed.id),
      attempts as (delete from webhook_attempts a using carried where a.delivery_id = carried.id returning 1),
      -- A delivery made pending again meanwhile (a resend) is left, and its event's delete then fails the statement.
      deliveries as (
        delete from webhook_deliveries d using carried where d.id = carried.id and d.status <> 'pending' returning 1),
      gone as (delete from events e using doomed where e.id = doomed.id returning 1)
      select (select count(*) from gone)::int as main, (select count(*) from deliveries)::int as webhook_deliveries,
        (select count(*) from attempts)::int as webhook_attempts`,
  },
  providerCallbacks: oldestRows("provider_callbacks", "received_at", { nullsFirst: true }),
  // Only orders whose transaction is final (found by the request id it was sent under) and whose callback,
  // if any, was sent: an open order may still be re-queried.
  sandboxOrders: {
    table: "sandbox_orders",
    build: (cutoff, limit) => sql`
      with doomed as (
        select s.reference from sandbox_orders s
        where s.created_at < ${cutoff} and (s.callback_due_at is null or s.callback_sent_at is not null)
          and exists (
            select 1 from provider_attempts pa join transactions t on t.id = pa.transaction_id
            where pa.provider = 'sandbox' and pa.request_id = s.reference and t.status in ${finalTransaction})
        order by s.created_at limit ${limit} for update of s skip locked),
      gone as (delete from sandbox_orders s using doomed where s.reference = doomed.reference returning 1)
      select count(*)::int as main from gone`,
  },
  lowBalanceAnomalies: oldestRows("provider_anomalies", "created_at", { nullsFirst: true, only: sql`kind = 'low_balance'` }),
};

/** Deletes one batch of `kind` older than `days` days by the database's clock. */
export async function deleteBatch(db: Executor, kind: RetentionKind, days: number, limit: number): Promise<Deleted> {
  const statement = statements[kind];
  const cutoff = sql`now() - make_interval(days => ${days}::int)`;
  const [row] = await queryRows<Record<string, number>>(db, statement.build(cutoff, limit));
  const main = Number(row?.main ?? 0);
  const byTable: Record<string, number> = { [statement.table]: main };
  for (const table of statement.alsoFrom ?? []) byTable[table] = (byTable[table] ?? 0) + Number(row?.[table] ?? 0);
  return { main, byTable };
}
