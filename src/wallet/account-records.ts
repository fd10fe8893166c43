import { eq, ilike, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { createApiKey } from "../auth/api-key-records.ts";
import { readNewestFirst } from "../db/keyset.ts";
import { accounts, wallets } from "../db/schema/index.ts";
import { type Executor, withTransaction } from "../db/transaction.ts";
import { notFound } from "../errors.ts";
import { openWallets } from "../ledger/wallet-rows.ts";
import type { CursorCodec, Page } from "../lib/cursor.ts";
import { presentWallet } from "./wallet-balance.ts";

type Account = components["schemas"]["Account"];
type AccountRow = typeof accounts.$inferSelect;

export const presentAccount = (row: AccountRow): Account => ({
  id: row.id,
  name: row.name,
  price_plan: row.pricePlan,
  created_at: row.createdAt.toISOString(),
});

/** An account with its two wallets (test, live) and one key per mode. */
export async function createAccount(db: Executor, name: string) {
  return withTransaction(db, async (tx) => {
    const [account] = await tx.insert(accounts).values({ name }).returning();
    if (!account) throw new Error("account insert returned nothing");
    await openWallets(tx, account.id);
    const keys = [await createApiKey(tx, account.id, "test"), await createApiKey(tx, account.id, "live")];
    return { account: presentAccount(account), keys };
  });
}

export async function listAccounts(
  db: Executor,
  cursors: CursorCodec,
  query: { cursor?: string; limit?: number; search?: string },
): Promise<Page<Account>> {
  const nameMatch = query.search ? ilike(accounts.name, `%${query.search.replace(/[\\%_]/g, "\\$&")}%`) : undefined;
  const request = { cursors, scope: "accounts", filters: { search: query.search }, query, conditions: [nameMatch] };
  return readNewestFirst(db, accounts, "createdAt", request, (rows) => rows.map(presentAccount));
}

export async function hasAnyAccount(db: Executor): Promise<boolean> {
  const rows = await db.select({ id: accounts.id }).from(accounts).limit(1);
  return rows.length > 0;
}

export async function getAccountDetail(db: Executor, accountId: string) {
  const [account] = await db.select().from(accounts).where(eq(accounts.id, accountId));
  if (!account) throw notFound("Account");
  const rows = await db.select().from(wallets).where(eq(wallets.accountId, accountId)).orderBy(wallets.mode);
  return { ...presentAccount(account), wallets: rows.map(presentWallet) };
}

/**
 * Puts the account on the plan `planName` (the caller has locked the account and checked the plan). Returns the
 * instant of the move on the database clock, as ISO 8601.
 */
export async function assignPricePlan(tx: Executor, accountId: string, planName: string): Promise<string> {
  const [moved] = await tx
    .update(accounts)
    .set({ pricePlan: planName })
    .where(eq(accounts.id, accountId))
    .returning({ at: sql<string>`to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')` });
  if (!moved) throw new Error("account update returned nothing");
  return moved.at;
}
