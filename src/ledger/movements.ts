import { type SQL, sql } from "drizzle-orm";
import { type Cte, cte } from "../db/cte.ts";
import type { ledgerEntries } from "../db/schema/index.ts";
import type { Scope } from "../lib/scope.ts";

export type MovementKind = (typeof ledgerEntries.$inferInsert)["kind"];

/**
 * How each kind moves a wallet, as the sign of its amount on the balance and on the hold. Every
 * ledger entry records exactly this (its deltas), so a wallet always equals the sum of its entries.
 */
const effects: Record<MovementKind, { balance: -1 | 0 | 1; held: -1 | 0 | 1 }> = {
  fund: { balance: 1, held: 0 },
  credit: { balance: 1, held: 0 },
  hold: { balance: 0, held: 1 },
  capture: { balance: -1, held: -1 },
  release: { balance: 0, held: -1 },
};

/** Whose wallet moves and by how much: an account and mode given by value. */
interface MovementTarget {
  wallet: Scope;
  amountKobo: number;
  transactionId?: string;
  note?: string;
}

/** What a movement's wallet CTE returns: the wallet after the movement, and what moved it. */
export type MovedWallet = Cte<"id" | "balance_kobo" | "held_kobo" | "amount_kobo" | "transaction_id" | "note">;

/** What a movement's entry CTE returns: the ledger entries it appended. */
export type AppendedEntry = Cte<
  "id" | "kind" | "amount_kobo" | "balance_after_kobo" | "held_after_kobo" | "transaction_id" | "note" | "created_ms"
>;

/**
 * One movement as parts of a single statement. `wallet` is the CTE that applies it to the wallet row;
 * `walletRow` names it and its columns (the wallet after the movement), so the caller's own parts can read
 * it. `entry` is the CTE that appends the movement's ledger entry; `entryRow` names it and its columns.
 * A caller writes `with ${wallet}, …its own parts…, ${entry} select …`: all of it happens, or none does.
 */
export interface MovementParts {
  walletRow: MovedWallet;
  wallet: SQL;
  entryRow: AppendedEntry;
  entry: SQL;
}

const signed = (sign: -1 | 0 | 1, amount: SQL) => (sign === 1 ? sql` + ${amount}` : sql` - ${amount}`);

const movedWallet = (name: string): MovedWallet =>
  cte(name, ["id", "balance_kobo", "held_kobo", "amount_kobo", "transaction_id", "note"]);
const appendedEntry = (name: string): AppendedEntry =>
  cte(name, ["id", "kind", "amount_kobo", "balance_after_kobo", "held_after_kobo", "transaction_id", "note", "created_ms"]);

/**
 * `name as (insert into ledger_entries …)`: THE append of ledger entries, for every movement kind. `entries` is a
 * query returning one row per entry: `wallet_id`, `kind`, `amount_kobo`, `balance_delta_kobo`, `held_delta_kobo`,
 * `balance_after_kobo`, `held_after_kobo` (the wallet as the entry leaves it), `transaction_id`, `note`, and `ord`,
 * its place among its wallet's entries: ids are given in that order, wallet by wallet. A zero amount writes no entry.
 */
function appendEntries(entryRow: AppendedEntry, entries: SQL): SQL {
  return sql`${entryRow.name} as (
      insert into ledger_entries (wallet_id, kind, amount_kobo, balance_delta_kobo, held_delta_kobo,
                                  balance_after_kobo, held_after_kobo, transaction_id, note)
      select wallet_id, kind, amount_kobo, balance_delta_kobo, held_delta_kobo,
             balance_after_kobo, held_after_kobo, transaction_id, note
      from (${entries}) e
      where amount_kobo > 0
      order by wallet_id, ord
      returning id, kind, amount_kobo, balance_after_kobo, held_after_kobo, transaction_id, note,
                (extract(epoch from created_at) * 1000)::float8 as created_ms
    )`;
}

/**
 * The one place a wallet moves by a given amount and its ledger entry is appended. A movement that lowers
 * the available balance (`balance_kobo - held_kobo`) applies only while the wallet covers it: otherwise the
 * wallet CTE returns no row and nothing is written. A zero amount moves nothing and writes no entry.
 */
function move(kind: MovementKind, target: MovementTarget): MovementParts {
  const effect = effects[kind];
  const walletRow = movedWallet(`${kind}_wallet`);
  const amount = sql`${target.amountKobo}`;
  const assignments: SQL[] = [];
  if (effect.balance !== 0) assignments.push(sql`balance_kobo = w.balance_kobo${signed(effect.balance, amount)}`);
  if (effect.held !== 0) assignments.push(sql`held_kobo = w.held_kobo${signed(effect.held, amount)}`);
  assignments.push(sql`updated_at = now()`);
  const lowersAvailable = effect.balance - effect.held < 0;
  const covered = lowersAvailable ? sql` and w.balance_kobo - w.held_kobo >= ${amount}` : sql``;
  const wallet = sql`${walletRow.name} as (
        update wallets w set ${sql.join(assignments, sql`, `)}
        where w.account_id = ${target.wallet.accountId} and w.mode = ${target.wallet.mode}${covered}
        returning w.id, w.balance_kobo, w.held_kobo, ${target.amountKobo}::bigint as amount_kobo,
                  ${target.transactionId ?? null}::uuid as transaction_id, ${target.note ?? null}::text as note
      )`;
  const entryRow = appendedEntry(`${kind}_entry`);
  const delta = (sign: -1 | 0 | 1) => sql.raw(sign === 0 ? "0" : sign === 1 ? "amount_kobo" : "-amount_kobo");
  const entry = appendEntries(
    entryRow,
    sql`select id as wallet_id, ${kind} as kind, amount_kobo, ${delta(effect.balance)} as balance_delta_kobo,
               ${delta(effect.held)} as held_delta_kobo, balance_kobo as balance_after_kobo, held_kobo as held_after_kobo,
               transaction_id, note, 0 as ord
        from ${walletRow.name}`,
  );
  return { walletRow, wallet, entryRow, entry };
}

/** Adds money to a test wallet by self-service. */
export const fund = (wallet: Scope, amountKobo: number, note?: string): MovementParts =>
  move("fund", { wallet, amountKobo, note });

/**
 * Adds money to a wallet on an operator's word, with a note; tied to a transaction when it gives
 * that transaction's money back (a refund is a credit that names its transaction).
 */
export const credit = (wallet: Scope, amountKobo: number, note?: string, transactionId?: string): MovementParts =>
  move("credit", { wallet, amountKobo, note, transactionId });

/** The holds to place: per transaction its wallet, its amount and the running sum of its wallet's holds up to it. */
export type HoldItems = Cte<"wallet_id" | "transaction_id" | "amount_kobo" | "running_kobo">;

/**
 * Holds for several transactions, on one wallet or several, as parts of one statement, placed together:
 * each wallet row is updated once by the sum of its holds (only while its available balance covers all
 * of it), and each hold gets its own ledger entry recording what it would have recorded had the holds
 * run one after another in their order. `items` is an earlier CTE returning `wallet_id`,
 * `transaction_id`, `amount_kobo` and `running_kobo` (the sum of that wallet's amounts up to and
 * including this one, in their order); the caller has locked the wallets (in id order) and chosen the
 * holds that fit. Its parts are named `hold_wallet` (returning the wallets as held after, with
 * `amount_kobo` their total) and `hold_entry`.
 */
export function holds(items: HoldItems): MovementParts {
  const walletRow = movedWallet("hold_wallet");
  const entryRow = appendedEntry("hold_entry");
  const { balance, held } = effects.hold;
  const delta = (sign: -1 | 0 | 1) => sql.raw(sign === 0 ? "0" : sign === 1 ? "i.amount_kobo" : "-i.amount_kobo");
  return {
    walletRow,
    wallet: sql`${walletRow.name} as (
        update wallets w set held_kobo = w.held_kobo + t.total, updated_at = now()
        from (select wallet_id, sum(amount_kobo)::bigint as total from ${items.name} group by wallet_id) t
        where w.id = t.wallet_id and t.total > 0 and w.balance_kobo - w.held_kobo >= t.total
        returning w.id, w.balance_kobo, w.held_kobo, t.total as amount_kobo, null::uuid as transaction_id, null::text as note
      )`,
    entryRow,
    entry: appendEntries(
      entryRow,
      sql`select w.id as wallet_id, 'hold' as kind, i.amount_kobo, ${delta(balance)} as balance_delta_kobo,
                 ${delta(held)} as held_delta_kobo, w.balance_kobo as balance_after_kobo,
                 w.held_kobo - w.amount_kobo + i.running_kobo as held_after_kobo, i.transaction_id, null::text as note,
                 i.running_kobo as ord
          from ${walletRow.name} w join ${items.name} i on i.wallet_id = w.id`,
    ),
  };
}

/**
 * Settling transactions in one statement, as parts of it: the capture (a successful one) or release (a
 * failed one) of each held price. `wallet` and `entry` are CTEs (`settled_wallets`, `settled_entries`) for a
 * caller's `with …`, after its CTE `source` of `transactions` rows (`id`, `account_id`, `mode`, `price_kobo`,
 * `status`), `ord`, the order in which they apply, and `note`, written on the entry (an operator's resolution).
 *
 * The wallets are locked in id order before any of them changes, so two such statements (or one and a
 * single movement) never wait on each other in a cycle. Each wallet is updated once, by the sum of its
 * transactions' movements (`update … from` with several matching rows would apply only one of them);
 * each transaction still gets its own ledger entry with its own amount, and running balances as if the
 * movements had applied one after another in `ord` order (the entries' ids follow that order too).
 * Capture and release never lower the available balance, so none of them waits on it; a missing hold
 * makes `held_kobo >= 0` fail the whole statement.
 */
export type SettledTransactions = Cte<"id" | "account_id" | "mode" | "price_kobo" | "status" | "ord" | "note">;

export function settleEach(settled: SettledTransactions): Pick<MovementParts, "wallet" | "entry"> {
  const source = settled.name;
  const delta = (column: "balance" | "held") =>
    sql.raw(
      `case s.status when 'successful' then ${effects.capture[column]} when 'failed' then ${effects.release[column]} end * s.price_kobo`,
    );
  // Each wallet found and locked by its own index lookup (a lateral subquery with `limit 1`), in id order, whatever
  // the planner makes of the sizes: a prepared statement's generic plan guesses 100 orders, and against a small
  // or never-analyzed `wallets` it chose a hash join over a scan of every wallet (~400 rows read per completion).
  const wallet = sql`settled_ids as materialized (
      select w.id, k.account_id, k.mode from (select distinct account_id, mode from ${source}) k
      cross join lateral (select id from wallets w where w.account_id = k.account_id and w.mode = k.mode limit 1) w
    ), settled_locked as materialized (
      select w.id, x.account_id, x.mode from (select * from settled_ids order by id) x
      cross join lateral (select w.id from wallets w where w.id = x.id limit 1 for update) w
    ), settled_steps as materialized (
      select l.id as wallet_id, s.id as transaction_id, s.ord, s.price_kobo as amount_kobo, s.note,
             case s.status when 'successful' then 'capture' when 'failed' then 'release' end as kind,
             ${delta("balance")} as balance_delta, ${delta("held")} as held_delta
      from ${source} s join settled_locked l on l.account_id = s.account_id and l.mode = s.mode
    ), settled_wallets as (
      update wallets w
      set balance_kobo = w.balance_kobo + t.balance_delta, held_kobo = w.held_kobo + t.held_delta, updated_at = now()
      from (select wallet_id, sum(balance_delta)::bigint as balance_delta, sum(held_delta)::bigint as held_delta
            from settled_steps group by wallet_id) t
      where w.id = t.wallet_id
      returning w.id, w.balance_kobo, w.held_kobo
    )`;
  const entry = appendEntries(
    appendedEntry("settled_entries"),
    sql`select wallet_id, kind, amount_kobo, balance_delta as balance_delta_kobo, held_delta as held_delta_kobo,
               (balance_kobo - balance_later)::bigint as balance_after_kobo, (held_kobo - held_later)::bigint as held_after_kobo,
               transaction_id, note, ord
        from (select s.*, w.balance_kobo, w.held_kobo,
                     coalesce(sum(s.balance_delta) over later, 0) as balance_later,
                     coalesce(sum(s.held_delta) over later, 0) as held_later
              from settled_steps s join settled_wallets w on w.id = s.wallet_id
              window later as (partition by s.wallet_id order by s.ord rows between 1 following and unbounded following)) r`,
  );
  return { wallet, entry };
}
