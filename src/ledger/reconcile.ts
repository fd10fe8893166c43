import { sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { queryRows } from "../db/rows.ts";
import type { Executor } from "../db/transaction.ts";
import { notFound } from "../errors.ts";
import type { Mode } from "../lib/scope.ts";

type Reconciliation = components["schemas"]["Reconciliation"];

export interface WalletDiscrepancy {
  walletId: string;
  balanceKobo: number;
  ledgerBalanceKobo: number;
  heldKobo: number;
  ledgerHeldKobo: number;
}

interface CheckRow {
  wallets_checked: number | string;
  account_known: boolean;
  checked_ms: number | string;
  id: string | null;
  account_id: string;
  mode: Mode;
  balance_kobo: number | string;
  held_kobo: number | string;
  ledger_balance: number | string;
  ledger_held: number | string;
}

interface CheckResult {
  walletsChecked: number;
  checkedAt: Date;
  /** False when an account was named and does not exist. */
  accountKnown: boolean;
  rows: CheckRow[];
}

/**
 * Every wallet (or one account's) set against the sum of its ledger entries, in one statement (one
 * snapshot): how many wallets there are, the database clock, whether the named account exists, and one row
 * per wallet whose balance or hold differs from its ledger (a single row with a null `id` when none does).
 */
async function checkWallets(db: Executor, accountId?: string): Promise<CheckResult> {
  const ofAccount = accountId === undefined ? sql`` : sql`where w.account_id = ${accountId}::uuid`;
  const known = accountId === undefined ? sql`true` : sql`exists (select 1 from accounts a where a.id = ${accountId}::uuid)`;
  const rows = await queryRows<CheckRow>(
    db,
    sql`with sums as (
          select w.id, w.account_id, w.mode, w.balance_kobo, w.held_kobo,
                 coalesce(sum(l.balance_delta_kobo), 0) as ledger_balance,
                 coalesce(sum(l.held_delta_kobo), 0) as ledger_held
          from wallets w left join ledger_entries l on l.wallet_id = w.id
          ${ofAccount}
          group by w.id
        )
        select totals.wallets_checked, totals.checked_ms, totals.account_known, d.*
        from (select count(*)::int as wallets_checked, (extract(epoch from now()) * 1000)::float8 as checked_ms,
                     ${known} as account_known
              from sums) totals
        left join (
          select * from sums where balance_kobo <> ledger_balance or held_kobo <> ledger_held
        ) d on true
        order by d.account_id, d.mode`,
  );
  const first = rows[0];
  return {
    walletsChecked: Number(first?.wallets_checked ?? 0),
    checkedAt: new Date(Number(first?.checked_ms ?? Date.now())),
    accountKnown: first?.account_known !== false,
    rows: rows.filter((row) => row.id !== null),
  };
}

/** Every wallet whose balance or hold differs from the sum of its ledger; empty when the books balance. */
export async function reconcileWallets(db: Executor): Promise<WalletDiscrepancy[]> {
  const { rows } = await checkWallets(db);
  return rows.map((r) => ({
    walletId: String(r.id),
    balanceKobo: Number(r.balance_kobo),
    ledgerBalanceKobo: Number(r.ledger_balance),
    heldKobo: Number(r.held_kobo),
    ledgerHeldKobo: Number(r.ledger_held),
  }));
}

/**
 * The books for operators: whether every wallet (or, with `accountId`, that account's) equals its ledger, how
 * many were checked, and the ones that do not. `404` for an unknown account.
 */
export async function reconciliationReport(db: Executor, accountId?: string): Promise<Reconciliation> {
  const { walletsChecked, checkedAt, accountKnown, rows } = await checkWallets(db, accountId);
  if (!accountKnown) throw notFound("Account");
  return {
    balanced: rows.length === 0,
    wallets_checked: walletsChecked,
    discrepancies: rows.map((r) => ({
      wallet_id: String(r.id),
      account_id: r.account_id,
      mode: r.mode,
      balance_kobo: Number(r.balance_kobo),
      ledger_balance_kobo: Number(r.ledger_balance),
      held_kobo: Number(r.held_kobo),
      ledger_held_kobo: Number(r.ledger_held),
    })),
    checked_at: checkedAt.toISOString(),
  };
}
