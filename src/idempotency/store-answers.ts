import { type SQL, sql } from "drizzle-orm";
import { type Cte, cte } from "../db/cte.ts";

/** How long a stored answer is replayed. */
export const retentionHours = 24;

/** Answers to store, one per row: the key, the fingerprint of the request's body, and the answer's status and body. */
export type AnswersToStore = Cte<"scope" | "method" | "path" | "key" | "fingerprint" | "status" | "body">;

/** The expired records the answers replace, by the row the claim found (`record`, its `ctid`; see `claimKeys`). */
export type ExpiredRecords = Cte<"record">;

/** What was stored, one row per answer. */
export type StoredAnswers = Cte<"scope" | "method" | "path" | "key" | "response_body">;

export const storedAnswers: StoredAnswers = cte("recorded", ["scope", "method", "path", "key", "response_body"]);

/**
 * `replaced as (…), recorded as (…)`: THE store of Idempotency-Key answers, for the generic protocol (one key)
 * and the vend accept (a batch), in the caller's statement: the expired records being replaced are deleted,
 * then each answer is inserted, replayed for `retentionHours`. The insert reads the delete's count, so the
 * delete runs first and a replaced key is free when the insert checks it. Only a record still expired is
 * deleted: a row the claim found in an earlier statement may have been swept and its place taken since.
 */
export function storeAnswers(answers: AnswersToStore, replacing: ExpiredRecords): SQL {
  const a = answers.column;
  return sql`replaced as (
      delete from idempotency_records r using ${replacing.name}
      where r.ctid = ${replacing.column.record} and r.expires_at <= now()
      returning r.key
    ), ${storedAnswers.name} as (
      insert into idempotency_records (scope, method, path, key, fingerprint, response_status, response_body, expires_at)
      select ${a.scope}, ${a.method}, ${a.path}, ${a.key}, ${a.fingerprint}, ${a.status}, ${a.body},
             now() + make_interval(hours => ${retentionHours})
      from ${answers.name}
      where (select count(*) from replaced) >= 0
      returning scope, method, path, key, response_body
    )`;
}
