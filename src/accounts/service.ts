import { eq, ilike, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { parseAllowList } from "../auth/allow-list.ts";
import { generateApiKey, type Mode } from "../auth/keys.ts";
import { readNewestFirst } from "../db/keyset.ts";
import { accounts, apiKeys, wallets } from "../db/schema/index.ts";
import { type Executor, withTransaction } from "../db/transaction.ts";
import { type FieldError, notFound, validationError } from "../errors.ts";
import type { CursorCodec, Page } from "../lib/cursor.ts";
import { presentWallet } from "../wallet/service.ts";

type Account = components["schemas"]["Account"];
type ApiKey = components["schemas"]["ApiKey"];
type ApiKeyCreated = components["schemas"]["ApiKeyCreated"];
type AccountRow = typeof accounts.$inferSelect;
type ApiKeyRow = typeof apiKeys.$inferSelect;

export const presentAccount = (row: AccountRow): Account => ({
  id: row.id,
  name: row.name,
  created_at: row.createdAt.toISOString(),
});

export const presentApiKey = (row: ApiKeyRow): ApiKey => ({
  id: row.id,
  account_id: row.accountId,
  mode: row.mode,
  prefix: row.prefix,
  created_at: row.createdAt.toISOString(),
  revoked_at: row.revokedAt?.toISOString() ?? null,
  last_used_at: row.lastUsedAt?.toISOString() ?? null,
  expires_at: row.expiresAt?.toISOString() ?? null,
  allowed_ips: row.allowedCidrs,
  rolled_from: row.rolledFrom,
});

/** What a new key may carry besides its mode: an expiry, an address allow-list, the key it replaces. */
export interface ApiKeyOptions {
  /** ISO 8601; must be in the future. */
  expiresAt?: string | null;
  allowedIps?: string[] | null;
  rolledFrom?: string;
}

/** The checked restrictions of a new key: 400 naming each bad field, before anything is written. */
function keyRestrictions(options: ApiKeyOptions, now: number) {
  const errors: FieldError[] = [];
  const expiresAt = options.expiresAt ? new Date(options.expiresAt) : null;
  if (expiresAt && !(expiresAt.getTime() > now)) errors.push({ field: "expires_at", message: "must be in the future" });
  const allowList = options.allowedIps ? parseAllowList(options.allowedIps) : null;
  errors.push(...(allowList?.errors ?? []));
  if (errors.length > 0) throw validationError(errors);
  return { expiresAt, allowedCidrs: allowList?.cidrs ?? null };
}

/** Inserts a key; the full secret exists only in the returned value. */
export async function createApiKey(
  db: Executor,
  accountId: string,
  mode: Mode,
  options: ApiKeyOptions = {},
): Promise<ApiKeyCreated> {
  const restrictions = keyRestrictions(options, Date.now());
  const [account] = await db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId));
  if (!account) throw notFound("Account");
  const key = generateApiKey(mode);
  const values = { accountId, mode, keyHash: key.hash, prefix: key.prefix, ...restrictions, rolledFrom: options.rolledFrom };
  const [row] = await db.insert(apiKeys).values(values).returning();
  if (!row) throw new Error("api key insert returned nothing");
  return { ...presentApiKey(row), key: key.key };
}

/** An account with its two wallets (test, live) and one key per mode. */
export async function createAccount(db: Executor, name: string) {
  return withTransaction(db, async (tx) => {
    const [account] = await tx.insert(accounts).values({ name }).returning();
    if (!account) throw new Error("account insert returned nothing");
    await tx.insert(wallets).values([
      { accountId: account.id, mode: "test" },
      { accountId: account.id, mode: "live" },
    ]);
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

export async function listApiKeys(db: Executor, accountId: string) {
  await getAccountDetail(db, accountId);
  const rows = await db.select().from(apiKeys).where(eq(apiKeys.accountId, accountId)).orderBy(apiKeys.createdAt);
  return rows.map(presentApiKey);
}

/**
 * Marks a key revoked (idempotent; an earlier revocation stays), from `propagationMs` after now: the recorded
 * time is when it stops working on every process. Returns it with its hash, so this process knows at once.
 */
export async function revokeApiKey(db: Executor, keyId: string, propagationMs: number) {
  const [row] = await db
    .update(apiKeys)
    .set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, now() + ${propagationMs}::integer * interval '1 millisecond')` })
    .where(eq(apiKeys.id, keyId))
    .returning();
  if (!row) throw notFound("API key");
  return { key: presentApiKey(row), hash: row.keyHash };
}
