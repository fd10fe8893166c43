import { and, desc, eq, lt, type SQL, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { withinRange } from "../db/keyset.ts";
import { ledgerEntries, transactions, wallets } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { type CursorCodec, type Page, pageLimit, toPage } from "../lib/cursor.ts";
import type { Scope } from "../lib/scope.ts";

type StatementEntry = components["schemas"]["StatementEntry"];
type LedgerEntryKind = StatementEntry["kind"];

export interface StatementQuery {
  /** RFC 3339, inclusive, on `created_at`. */
  from?: string;
  /** RFC 3339, inclusive, on `created_at`. */
  to?: string;
  kind?: LedgerEntryKind;
  cursor?: string;
  limit?: number;
}

/**
 * One page of the scope's wallet statement, newest entry first by id: a wallet's entries are numbered while
 * its row is locked, so id order is the order they were applied. `from`/`to` filter on `created_at`; cursors
 * are bound to the scope and the filters.
 */
export async function listLedgerEntries(
  db: Executor,
  cursors: CursorCodec,
  scope: Scope,
  query: StatementQuery,
): Promise<Page<StatementEntry>> {
  const range = withinRange(ledgerEntries.createdAt, query);
  const cursorScope = `ledger:${scope.accountId}:${scope.mode}`;
  const filters = { kind: query.kind, ...range.bound };
  const limit = pageLimit(query.limit);
  // The wallet as a scalar subquery: the entries are then read down ledger_wallet_idx (wallet_id, id) in page order.
  const wallet = db
    .select({ id: wallets.id })
    .from(wallets)
    .where(and(eq(wallets.accountId, scope.accountId), eq(wallets.mode, scope.mode)));
  const conditions: (SQL | undefined)[] = [
    eq(ledgerEntries.walletId, sql`(${wallet})`),
    query.kind === undefined ? undefined : eq(ledgerEntries.kind, query.kind),
    ...range.conditions,
    query.cursor ? lt(ledgerEntries.id, Number(cursors.decode(cursorScope, filters, query.cursor).id)) : undefined,
  ];
  const rows = await db
    .select({
      id: ledgerEntries.id,
      kind: ledgerEntries.kind,
      amountKobo: ledgerEntries.amountKobo,
      balanceDeltaKobo: ledgerEntries.balanceDeltaKobo,
      heldDeltaKobo: ledgerEntries.heldDeltaKobo,
      balanceAfterKobo: ledgerEntries.balanceAfterKobo,
      heldAfterKobo: ledgerEntries.heldAfterKobo,
      reference: transactions.reference,
      note: ledgerEntries.note,
      createdAt: ledgerEntries.createdAt,
    })
    .from(ledgerEntries)
    .leftJoin(transactions, eq(transactions.id, ledgerEntries.transactionId))
    .where(and(...conditions))
    .orderBy(desc(ledgerEntries.id))
    .limit(limit + 1);
  const positioned = rows.map((row) => ({ row, createdAt: row.createdAt, id: String(row.id) }));
  return toPage(
    positioned,
    limit,
    ({ row }): StatementEntry => ({
      id: row.id,
      kind: row.kind,
      amount_kobo: row.amountKobo,
      balance_delta_kobo: row.balanceDeltaKobo,
      held_delta_kobo: row.heldDeltaKobo,
      balance_after_kobo: row.balanceAfterKobo,
      held_after_kobo: row.heldAfterKobo,
      available_after_kobo: row.balanceAfterKobo - row.heldAfterKobo,
      reference: row.reference,
      note: row.note,
      created_at: row.createdAt.toISOString(),
    }),
    (position) => cursors.encode(cursorScope, filters, position),
  );
}
