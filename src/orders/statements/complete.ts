import { sql } from "drizzle-orm";
import { storedNow, storedNowIso } from "../../db/clock.ts";
import { cte } from "../../db/cte.ts";
import { plannedForOne, preparedStatement, statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";
import { settleEach } from "../../ledger/movements.ts";
import { emitEach } from "../../webhooks/statements/emit-each.ts";
import { finalChannel } from "../announcements.ts";
import { answerAttempts } from "./answer-attempt.ts";

/** Its name in `pg_stat_statements` and `pg_prepared_statements` (the text's first line). */
export const completeStatementName = "orders.complete";

/** One order of a completion, as the statement reads it (one JSON document for all, `json_to_recordset`). */
export interface CompleteOrder {
  /** Its position in the batch, from 1. */
  ord: number;
  id: string;
  /** The row as the caller read it: the guard. */
  from_status: string;
  from_updated_at: string;
  /** The claim that must still hold it (a worker's); null: none (a callback, an operator). */
  lease_owner: string | null;
  attempts: number | null;
  status: "successful" | "failed";
  metadata: unknown;
  provider_reference: string | null;
  failure_reason: string | null;
  /** Written on the capture or release entry (an operator's resolution). */
  note: string | null;
  event_id: string;
  event_type: string;
  /** The event's payload, `token` standing for the completion time. */
  payload: unknown;
  announcement: string;
  /** Which NOTIFY of `finalChannel` carries the announcement (each within the 8000-byte limit). */
  chunk: number;
  answer_status: string;
  answer_message: string | null;
  answer_ms: number | null;
  answer_provider: string | null;
}

/**
 * What goes in: the orders as ONE JSON document (so the SQL text never changes and is prepared once per
 * connection, and the driver escapes one string instead of 19 arrays), and `token`, the stand-in for the
 * completion time in `payload` and `announcement` (see `newInstantToken`).
 */
export interface CompleteInput {
  orders: CompleteOrder[];
  token: string;
}

/** The statement's one row: the positions (1-based, comma-separated) it changed, and when (the database clock). */
export interface CompleteRow {
  changed: string | null;
  completed_at: string;
}

const txn = cte("txn", [
  "id",
  "account_id",
  "mode",
  "price_kobo",
  "status",
  "provider",
  "ord",
  "note",
  "event_id",
  "event_type",
  "payload",
  "announcement",
  "chunk",
  "answer_status",
  "answer_message",
  "answer_ms",
  "answer_reference",
  "answer_provider",
]);
const settle = settleEach(txn);
const emitted = emitEach(txn);

/** The completion's text, built once (see `preparedStatement`): one value per `CompleteInput` field. */
const completeStatement = preparedStatement<{ orders: string; token: string }, CompleteRow>(
  () => sql`${statementLabel(completeStatementName)}with input as materialized (
          select * from json_to_recordset(${sql.placeholder("orders")}::json) as i(
            ord int, id uuid, from_status text, from_updated_at text, lease_owner text, attempts int, status text, metadata jsonb,
            provider_reference text, failure_reason text, note text, event_id text, event_type text, payload json, announcement text,
            chunk int, answer_status text, answer_message text, answer_ms int, answer_provider text)
          -- Always true (positions are never negative), but a range the planner cannot size: it plans for ONE order, so
          -- each later step reads by key whatever the tables' sizes (see plannedForOne).
          where ${plannedForOne(sql`i.ord`)}
        ), guarded as materialized (
          -- One primary-key lookup (and lock) per transaction, in id order, whatever the planner guesses of the
          -- sizes (a prepared statement's plan outlives the statistics it was made with).
          select t.id, t.created_at, i.ord from (select * from input order by id) i
          cross join lateral (select * from transactions t where t.id = i.id limit 1 for update) t
          where t.status = i.from_status and t.updated_at = i.from_updated_at::timestamptz
            and (i.lease_owner is null or (t.lease_owner = i.lease_owner and t.attempts = i.attempts))
        ), ${txn.name} as (
          update transactions t
          set status = i.status, completed_at = ${storedNow}, updated_at = ${storedNow}, metadata = i.metadata,
              provider_reference = i.provider_reference, failure_reason = i.failure_reason,
              lease_owner = null, lease_expires_at = null, next_attempt_at = null
          from guarded g join input i on i.ord = g.ord
          -- The whole primary key: on the id alone a never-analyzed table is guessed at ~20 rows per order.
          where t.id = g.id and t.created_at = g.created_at
          returning t.id, t.account_id, t.mode, t.price_kobo, t.status, t.provider, i.ord, i.note, i.event_id, i.event_type,
                    replace(i.payload::text, ${sql.placeholder("token")}, ${storedNowIso})::jsonb as payload,
                    replace(i.announcement, ${sql.placeholder("token")}, ${storedNowIso}) as announcement, i.chunk,
                    i.answer_status, i.answer_message, i.answer_ms, t.provider_reference as answer_reference, i.answer_provider
        ), dequeued as (
          delete from transaction_queue q using ${txn.name} where q.transaction_id = ${txn.name}.id
        ), ${settle.wallet}, ${settle.entry}, ${emitted.parts}, ${answerAttempts(txn)}
        select (select string_agg(ord::text, ',') from ${txn.name}) as changed, ${storedNowIso} as completed_at,
               ${emitted.notify} as webhooks_due,
               (select count(*) from (select pg_notify(${finalChannel}, '[' || string_agg(announcement, ',' order by ord) || ']')
                                      from ${txn.name} group by chunk) n) as final_announced`,
);

/**
 * THE completion statement, for one order or many: per transaction the guarded status change (its status and
 * `updated_at` as read, and its lease), the capture or release with its ledger entry, the event with its
 * deliveries and the attempt's answer; ONE NOTIFY waking webhook delivery and the final announcements grouped
 * into as few NOTIFYs as fit. Transaction rows are locked in id order, then the wallets in id order (see
 * `settleEach`), so concurrent completions never deadlock. A missing hold breaks `held_kobo >= 0` and fails
 * all of it.
 */
export async function runCompleteStatement(db: Executor, c: CompleteInput): Promise<CompleteRow> {
  const [row] = await completeStatement(db, { orders: JSON.stringify(c.orders), token: c.token });
  if (!row) throw new Error("the completion statement answered no row");
  return row;
}
