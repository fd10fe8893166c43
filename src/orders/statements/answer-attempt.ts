import { type SQL, sql } from "drizzle-orm";
import type { Cte } from "../../db/cte.ts";
import { plannedForOne } from "../../db/rows.ts";

/**
 * What a statement's transactions CTE gives the attempt's answer: the transaction (`id`), the provider it is
 * with, and the answer: its status, message, answer time, the provider's reference it carried, and the
 * provider whose attempt it is (null: the one the order is with).
 */
export const attemptAnswerColumns = [
  "id",
  "provider",
  "answer_status",
  "answer_message",
  "answer_ms",
  "answer_reference",
  "answer_provider",
] as const;

export type AttemptAnswers = Cte<(typeof attemptAnswerColumns)[number]>;

/**
 * `attempt_rows as (…), answered as (…)`: the provider's answer recorded on its attempt (`provider_attempts`),
 * for each row of `answers`; an answer's missing message or reference keeps the attempt's, and its first
 * answer time stays. The one place an attempt is answered, in the statement that moves its order
 * (completion, pending).
 *
 * Each attempt is found (and locked) by ONE unique-index lookup, and updated by its row address: a join on
 * `ctid` planned for one answer whatever the caller's estimate (see plannedForOne), so one TID lookup each. A
 * join of the table with the answers would be planned on the sizes known when the prepared statement was first
 * planned, and a hash join planned on a young table scans every attempt ever made, on every completion, for as
 * long as the connection lives (test/processing/hot-statement-plans.test.ts).
 */
export function answerAttempts(answers: AttemptAnswers): SQL {
  const c = answers.column;
  return sql`attempt_rows as materialized (
      select found.row, ${c.id} as transaction_id, found.provider, row_number() over () as n from ${answers.name}
      cross join lateral (
        select p.ctid as row, p.provider from provider_attempts p
        where p.transaction_id = ${c.id} and p.provider = coalesce(${c.answer_provider}, ${c.provider})
        limit 1 for update
      ) found
    ), answered as (
      update provider_attempts a
      set status = ${c.answer_status}, message = coalesce(${c.answer_message}, a.message),
          provider_reference = coalesce(${c.answer_reference}, a.provider_reference),
          answered_at = now(), answer_ms = coalesce(a.answer_ms, ${c.answer_ms})
      from (select * from attempt_rows where ${plannedForOne(sql`n`)}) r join ${answers.name} on ${c.id} = r.transaction_id
      where a.ctid = r.row and a.provider = r.provider
    )`;
}
