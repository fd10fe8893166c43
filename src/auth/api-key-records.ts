import { eq, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { accounts, apiKeys } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { type FieldError, notFound, validationError } from "../errors.ts";
import { parseAllowList } from "./allow-list.ts";
import { generateApiKey, type Mode } from "./keys.ts";

type ApiKey = components["schemas"]["ApiKey"];
type ApiKeyCreated = components["schemas"]["ApiKeyCreated"];
type ApiKeyRow = typeof apiKeys.$inferSelect;

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

async function assertAccountExists(db: Executor, accountId: string): Promise<void> {
  const [account] = await db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId));
  if (!account) throw notFound("Account");
}

/** Inserts a key; the full secret exists only in the returned value. */
export async function createApiKey(
  db: Executor,
  accountId: string,
  mode: Mode,
  options: ApiKeyOptions = {},
): Promise<ApiKeyCreated> {
  const restrictions = keyRestrictions(options, Date.now());
  await assertAccountExists(db, accountId);
  const key = generateApiKey(mode);
  const values = { accountId, mode, keyHash: key.hash, prefix: key.prefix, ...restrictions, rolledFrom: options.rolledFrom };
  const [row] = await db.insert(apiKeys).values(values).returning();
  if (!row) throw new Error("api key insert returned nothing");
  return { ...presentApiKey(row), key: key.key };
}

export async function listApiKeys(db: Executor, accountId: string) {
  await assertAccountExists(db, accountId);
  const rows = await db.select().from(apiKeys).where(eq(apiKeys.accountId, accountId)).orderBy(apiKeys.createdAt);
  return rows.map(presentApiKey);
}

/**
 * Marks a key revoked from now (idempotent: an earlier revocation stays). `revokedNow` says whether this call
 * revoked it: then, once every process refuses it, `recordKeyEnd` moves the recorded instant to that moment.
 * Returns it with its hash, so this process knows at once.
 */
export async function revokeApiKey(db: Executor, keyId: string) {
  const [before] = await db.select({ revokedAt: apiKeys.revokedAt }).from(apiKeys).where(eq(apiKeys.id, keyId)).for("update");
  if (!before) throw notFound("API key");
  const [row] = await db
    .update(apiKeys)
    .set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, now())` })
    .where(eq(apiKeys.id, keyId))
    .returning();
  if (!row) throw notFound("API key");
  return { key: presentApiKey(row), hash: row.keyHash, revokedNow: before.revokedAt === null };
}

/**
 * The instant a key that stopped working by this process's doing is refused everywhere: its revocation (or
 * its expiry, for a key rolled with no grace), set when every process had it, to now. Returns the key.
 */
export async function recordKeyEnd(db: Executor, keyId: string, end: "revokedAt" | "expiresAt"): Promise<ApiKey> {
  const [row] = await db
    .update(apiKeys)
    .set({ [end]: sql`now()` })
    .where(eq(apiKeys.id, keyId))
    .returning();
  if (!row) throw notFound("API key");
  return presentApiKey(row);
}
