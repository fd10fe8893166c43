import { type SQL, sql } from "drizzle-orm";
import { type Cte, cte } from "../db/cte.ts";

/**
 * Requests to claim Idempotency-Keys for, one per row: its position (`ord`), the key's advisory lock name
 * (`lockNameOf`; null for a request covered by an enclosing key, which is free) and the key itself.
 */
export type KeyRequests = Cte<"ord" | "lock" | "scope" | "method" | "path" | "key">;

/** What the claim found per request (see `PriorAnswer`), and the stored record's row (`record`, to replace an expired one). */
export type ClaimedKeys = Cte<"ord" | "locked" | "status" | "body" | "fingerprint" | "expired" | "record">;

export const claimedKeys: ClaimedKeys = cte("claimed", ["ord", "locked", "status", "body", "fingerprint", "expired", "record"]);

/**
 * `claimed as (…)`: THE claim of Idempotency-Keys, for the generic protocol (one key) and the vend accept (a
 * batch), in the caller's statement: per request in `ord` order, the key's transaction-scoped advisory lock
 * taken without waiting (`locked` false: another request holds it, a 409) and its stored answer, if any. The
 * statement sees the records as of its start; `onceMoreIfRaced` covers a first request committing meanwhile.
 */
export function claimKeys(requests: KeyRequests): SQL {
  const i = requests.column;
  return sql`${claimedKeys.name} as (
      select ${i.ord} as ord,
             case when ${i.lock} is null then true else pg_try_advisory_xact_lock(hashtextextended(${i.lock}, 0)) end as locked,
             r.response_status as status, r.response_body as body, r.fingerprint, r.expires_at <= now() as expired,
             r.ctid as record
      from ${requests.name}
      -- One primary-key lookup per request whatever the planner guesses of the sizes (a prepared statement's
      -- plan outlives the statistics it was made with): the limit keeps the lateral from becoming a hash join.
      left join lateral (
        select r.ctid, r.response_status, r.response_body, r.fingerprint, r.expires_at from idempotency_records r
        where r.scope = ${i.scope} and r.method = ${i.method} and r.path = ${i.path} and r.key = ${i.key}
        limit 1
      ) r on true
      order by ${i.ord}
    )`;
}
