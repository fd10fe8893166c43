import { sql } from "drizzle-orm";
import { storedNow, storedNowIso } from "../../db/clock.ts";
import { cte } from "../../db/cte.ts";
import { plannedForOne, preparedStatement, statementLabel } from "../../db/rows.ts";
import type { Executor } from "../../db/transaction.ts";
import { claimedKeys, claimKeys } from "../../idempotency/claim-keys.ts";
import type { PriorAnswer } from "../../idempotency/protocol.ts";
import { storeAnswers, storedAnswers } from "../../idempotency/store-answers.ts";
import { holds } from "../../ledger/movements.ts";
import type { Mode } from "../../lib/scope.ts";

export const acceptStatementName = "orders.accept";

/** One request as the statement takes it (one element of its JSON parameter). */
export interface AcceptInput {
  /** Its position in the batch. */
  ord: number;
  account_id: string;
  mode: Mode;
  /** The key's advisory lock (`lockNameOf`) and the key; all null for an order covered by an enclosing key. */
  lock: string | null;
  scope: string | null;
  method: string | null;
  path: string | null;
  key: string | null;
  fingerprint: string;
  id: string;
  reference: string;
  product_code: string;
  network: string;
  service: string;
  destination: string;
  amount_kobo: number;
  price_kobo: number;
  metadata: Record<string, string>;
  client_reference: string | null;
  provider: string;
  /** The 202 answer's body, `token` standing for the creation time (see `newInstantToken`). */
  body: string;
  token: string;
  trace_context: string | null;
  batch_id: string | null;
}

/** What the statement answers per request. */
export interface AcceptRow extends PriorAnswer {
  ord: number;
  /** What the wallet had available when this request's turn came (for a 402's message). */
  available_kobo: number | string;
  accepted: boolean;
  recorded_body: string | null;
}

const requests = cte("input", ["ord", "lock", "scope", "method", "path", "key"]);
const held = holds(cte("accepted", ["wallet_id", "transaction_id", "amount_kobo", "running_kobo"]));
/** The expired records of the free keys, and the accepted requests' answers: what the store writes. */
const expiredRecords = cte("expired", ["record"]);
const answers = cte("answers", ["scope", "method", "path", "key", "fingerprint", "status", "body"]);

/**
 * The statement: requests travel as one JSON parameter, so its text is the same for any batch, built once
 * (see `preparedStatement`) and prepared once per connection. `fit` walks the free requests in order,
 * placing each hold that the balance left by the earlier ones covers (the wallet row is locked first, so
 * the balance is current).
 */
const acceptStatement = preparedStatement<{ input: string }, AcceptRow>(
  () => sql`${statementLabel(acceptStatementName)}with recursive
      input as (
        select * from json_to_recordset(${sql.placeholder("input")}::json) as i(
          ord int, account_id uuid, mode text, lock text, scope text, method text, path text, key text, fingerprint text, id uuid, reference text,
          product_code text, network text, service text, destination text, amount_kobo bigint, price_kobo bigint,
          metadata jsonb, client_reference text, provider text, body text, token text, trace_context text, batch_id uuid)
        -- Planned for one order, so each step reads by key at every table size (see plannedForOne).
        where ${plannedForOne(sql`i.ord`)}
      ),
      -- An order without a key of its own (a bulk order's) is free: the enclosing key is held.
      ${claimKeys(requests)},
      wallet_ids as (
        select w.id, k.account_id, k.mode from (select distinct account_id, mode from input) k
        cross join lateral (select id from wallets w where w.account_id = k.account_id and w.mode = k.mode limit 1) w
      ),
      -- Locked in id order (like every statement that moves several wallets), so none waits on another in a cycle.
      wallets_locked as (
        select w.id, x.account_id, x.mode, w.balance_kobo - w.held_kobo as available_kobo
        from (select * from wallet_ids order by id) x
        cross join lateral (select * from wallets w where w.id = x.id limit 1 for update) w
      ),
      free_keys as (
        select row_number() over (partition by wl.id order by c.ord) as n, c.ord, wl.id as wallet_id, i.price_kobo
        from ${claimedKeys.name} c join input i on i.ord = c.ord
        join wallets_locked wl on wl.account_id = i.account_id and wl.mode = i.mode
        where c.locked and (c.status is null or c.expired)
      ),
      fit (wallet_id, n, before, remaining, fits) as (
        select id, 0::bigint, null::bigint, available_kobo, true from wallets_locked
        union all
        select f.wallet_id, f.n, fit.remaining,
               case when f.price_kobo <= fit.remaining then fit.remaining - f.price_kobo else fit.remaining end,
               coalesce(f.price_kobo <= fit.remaining, false)
        from fit join free_keys f on f.wallet_id = fit.wallet_id and f.n = fit.n + 1
      ),
      accepted as (
        select f.ord, f.wallet_id, i.id as transaction_id, f.price_kobo as amount_kobo,
               sum(f.price_kobo) over (partition by f.wallet_id order by f.ord)::bigint as running_kobo
        from free_keys f join fit on fit.wallet_id = f.wallet_id and fit.n = f.n and fit.fits join input i on i.ord = f.ord
      ),
      ${held.wallet},
      txn as (
        insert into transactions (id, reference, account_id, mode, status, product_code, network, service, destination,
                                  amount_kobo, price_kobo, metadata, client_reference, batch_id, provider, trace_context,
                                  next_attempt_at, created_at, updated_at)
        select i.id, i.reference, i.account_id, i.mode, 'queued', i.product_code, i.network, i.service,
               i.destination, i.amount_kobo, i.price_kobo, i.metadata, i.client_reference, i.batch_id, i.provider, i.trace_context,
               ${storedNow}, ${storedNow}, ${storedNow}
        from accepted a join input i on i.ord = a.ord join ${held.walletRow.name} hw on hw.id = a.wallet_id
        order by a.ord
        returning id, created_at
      ),
      queued as (
        insert into transaction_queue (transaction_id, created_at, due_at) select id, created_at, created_at from txn
      ),
      ${held.entry},
      ${expiredRecords.name} as (
        select c.record from ${claimedKeys.name} c join free_keys f on f.ord = c.ord where c.expired
      ),
      ${answers.name} as (
        select i.scope, i.method, i.path, i.key, i.fingerprint, 202 as status, replace(i.body, i.token, ${storedNowIso}) as body
        from accepted a join input i on i.ord = a.ord join ${held.walletRow.name} hw on hw.id = a.wallet_id
        where i.lock is not null
      ),
      ${storeAnswers(answers, expiredRecords)}
      select c.ord, c.locked, c.status, c.body, c.fingerprint, c.expired,
             coalesce((select fit.before from free_keys f join fit on fit.wallet_id = f.wallet_id and fit.n = f.n
                       where f.ord = c.ord), 0) as available_kobo,
             a.ord is not null and exists (select 1 from ${held.walletRow.name} hw where hw.id = a.wallet_id) as accepted,
             (select r.response_body from ${storedAnswers.name} r join input i
                on r.scope = i.scope and r.method = i.method and r.path = i.path and r.key = i.key
              where i.ord = c.ord) as recorded_body
      from ${claimedKeys.name} c left join accepted a on a.ord = c.ord
      order by c.ord`,
);

/** Runs the accept statement for `input`, one answer row per request. */
export function runAcceptStatement(db: Executor, input: readonly AcceptInput[]): Promise<AcceptRow[]> {
  return acceptStatement(db, { input: JSON.stringify(input) });
}
