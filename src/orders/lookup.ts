import { and, eq, isNull, lt, type SQL } from "drizzle-orm";
import { afterPosition, readNewestFirst, withinRange } from "../db/keyset.ts";
import { transactions } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { notFound } from "../errors.ts";
import { type CursorCodec, type Page, pageLimit } from "../lib/cursor.ts";
import type { Mode, Scope } from "../lib/scope.ts";
import { normalisePhone } from "../lib/shared/destinations.ts";
import { amongNewestOfEach, searchAlternatives } from "./search-alternatives.ts";
import {
  type AdminTransaction,
  presentAdminTransaction,
  presentTransaction,
  providerAttemptsOf,
  type Transaction,
  type TransactionRow,
} from "./view.ts";

type TransactionStatus = TransactionRow["status"];

export interface TransactionFilters {
  status?: TransactionStatus;
  destination?: string;
  network?: string;
  service?: string;
  /** RFC 3339, inclusive. */
  from?: string;
  /** RFC 3339, inclusive. */
  to?: string;
  search?: string;
  /** The client's own reference, exactly (case-sensitive). */
  client_reference?: string;
  /** Only the orders of this bulk order (`vend_batches`). */
  batch_id?: string;
}

export interface ListTransactionsQuery extends TransactionFilters {
  cursor?: string;
  limit?: number;
}

export interface AdminListTransactionsQuery extends ListTransactionsQuery {
  account_id?: string;
  mode?: Mode;
  /** Only pending orders accepted before the stuck cutoff. */
  stuck?: boolean;
}

/** The effective filters (what the cursor is bound to), their SQL conditions, and the search's alternatives. */
function filterConditions(filters: TransactionFilters): {
  bound: Record<string, string | undefined>;
  conditions: SQL[];
  anyOf?: SQL[];
} {
  const range = withinRange(transactions.createdAt, filters);
  const destination =
    filters.destination === undefined ? undefined : (normalisePhone(filters.destination) ?? filters.destination);
  // One spelling of the UUID, so a cursor is bound to the batch whatever letter case names it.
  const batchId = filters.batch_id?.toLowerCase();
  const conditions: (SQL | undefined)[] = [
    filters.status === undefined ? undefined : eq(transactions.status, filters.status),
    destination === undefined ? undefined : eq(transactions.destination, destination),
    filters.network === undefined ? undefined : eq(transactions.network, filters.network),
    filters.service === undefined ? undefined : eq(transactions.service, filters.service),
    ...range.conditions,
    filters.client_reference === undefined ? undefined : eq(transactions.clientReference, filters.client_reference),
    batchId === undefined ? undefined : eq(transactions.batchId, batchId),
  ];
  const bound = {
    status: filters.status,
    destination,
    network: filters.network,
    service: filters.service,
    ...range.bound,
    search: filters.search,
    client_reference: filters.client_reference,
    batch_id: batchId,
  };
  return {
    bound,
    conditions: conditions.filter((c): c is SQL => c !== undefined),
    anyOf: filters.search === undefined ? undefined : searchAlternatives(filters.search),
  };
}

/** One page of the scope's transactions, newest first by `(created_at, id)`; cursors bound to scope and filters. */
export function listTransactions(
  db: Executor,
  cursors: CursorCodec,
  scope: Scope,
  query: ListTransactionsQuery,
): Promise<Page<Transaction>> {
  return readPage(db, cursors, `transactions:${scope.accountId}:${scope.mode}`, query, presentTransaction, (filters) => {
    filters.conditions.unshift(eq(transactions.accountId, scope.accountId), eq(transactions.mode, scope.mode));
    return filters.bound;
  });
}

/**
 * One page of transactions newest first by `(created_at, id)`, its cursors bound to `cursorScope` and the
 * filters; `narrow` adds the caller's own conditions and answers the filters the cursor is bound to.
 */
function readPage<T>(
  db: Executor,
  cursors: CursorCodec,
  cursorScope: string,
  query: ListTransactionsQuery,
  present: (row: TransactionRow) => T,
  narrow: (filters: ReturnType<typeof filterConditions>) => Record<string, string | undefined>,
): Promise<Page<T>> {
  const found = filterConditions(query);
  const filters = narrow(found);
  let conditions = found.conditions;
  if (found.anyOf) {
    // Each alternative's page starts after the cursor too; readNewestFirst adds it to the whole page.
    const after = query.cursor
      ? afterPosition(transactions.createdAt, transactions.id, cursors.decode(cursorScope, filters, query.cursor))
      : undefined;
    conditions = [amongNewestOfEach(after ? [...conditions, after] : conditions, found.anyOf, pageLimit(query.limit) + 1)];
  }
  const request = { cursors, scope: cursorScope, filters, query, conditions };
  return readNewestFirst(db, transactions, "createdAt", request, (rows) => rows.map((row) => present(row)));
}

/**
 * One page across all accounts, optionally narrowed to one account and/or mode, or to stuck orders
 * (`pending` and accepted before `stuckCutoff`, an instant the statement computes on the database's clock).
 */
export function adminListTransactions(
  db: Executor,
  cursors: CursorCodec,
  query: AdminListTransactionsQuery,
  stuckCutoff: SQL,
): Promise<Page<AdminTransaction>> {
  return readPage(
    db,
    cursors,
    "admin-transactions",
    query,
    (row) => presentAdminTransaction(row),
    ({ bound, conditions }) => {
      if (query.account_id !== undefined) conditions.push(eq(transactions.accountId, query.account_id));
      if (query.mode !== undefined) conditions.push(eq(transactions.mode, query.mode));
      // `completed_at is null`: the open orders' index (transactions_open_idx), so the admin list of stuck orders
      // reads only what is open.
      if (query.stuck === true)
        conditions.push(
          isNull(transactions.completedAt),
          eq(transactions.status, "pending"),
          lt(transactions.createdAt, stuckCutoff),
        );
      return { ...bound, account_id: query.account_id, mode: query.mode, stuck: query.stuck ? "true" : undefined };
    },
  );
}

/** The scope's transaction row with this reference, or null (another account's or mode's is null too). */
export async function findTransactionRow(db: Executor, scope: Scope, reference: string): Promise<TransactionRow | null> {
  const [row] = await db
    .select()
    .from(transactions)
    .where(
      and(eq(transactions.reference, reference), eq(transactions.accountId, scope.accountId), eq(transactions.mode, scope.mode)),
    )
    .limit(1);
  return row ?? null;
}

/** The scope's transaction, presented; `404 NOT_FOUND` when the scope has none with this reference. */
export async function getTransactionByReference(db: Executor, scope: Scope, reference: string): Promise<Transaction> {
  const row = await findTransactionRow(db, scope, reference);
  if (!row) throw notFound("Transaction");
  return presentTransaction(row);
}

/** Any account's transaction, with its account id; `404 NOT_FOUND` when none has this reference. */
export async function adminGetTransaction(db: Executor, reference: string): Promise<AdminTransaction> {
  const [row] = await db.select().from(transactions).where(eq(transactions.reference, reference)).limit(1);
  if (!row) throw notFound("Transaction");
  return presentAdminTransaction(row, await providerAttemptsOf(db, row.id));
}
