import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { createApiKey, presentApiKey } from "../accounts/service.ts";
import { apiKeys } from "../db/schema/index.ts";
import { type Executor, withTransaction } from "../db/transaction.ts";
import { AppError } from "../errors.ts";
import type { ApiPrincipal } from "../lib/scope.ts";

type ApiKey = components["schemas"]["ApiKey"];
type ApiKeyRolled = components["schemas"]["ApiKeyRolled"];

/** How long a rolled key keeps working unless the client says otherwise. */
export const defaultGraceSeconds = 3600;

/** The keys of the caller's account and mode, oldest first, prefixes only; the caller's own is `current`. */
export async function listAccountKeys(db: Executor, caller: ApiPrincipal): Promise<ApiKey[]> {
  const rows = await db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.accountId, caller.accountId), eq(apiKeys.mode, caller.mode)))
    .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
  return rows.map((row) => ({ ...presentApiKey(row), current: row.id === caller.keyId }));
}

/**
 * Replaces the caller's key: a new key with its account, mode and allow-list, and the caller's key expiring
 * after `graceSeconds` (an earlier expiry stays). A key has at most one working successor: one never used
 * is revoked and replaced (a retry after a lost answer); one already used makes this a 409. Returns the
 * hashes whose cached copies must go (the caller's, with its new expiry, and any revoked successor).
 */
export async function rollApiKey(
  db: Executor,
  caller: ApiPrincipal,
  graceSeconds: number,
): Promise<{ rolled: ApiKeyRolled; evict: string[] }> {
  return withTransaction(db, async (tx) => {
    const [current] = await tx
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.id, caller.keyId), isNull(apiKeys.revokedAt)))
      .for("update");
    if (!current) throw new AppError("UNAUTHENTICATED", "API key is unknown or revoked");
    const successors = await tx
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.accountId, current.accountId), eq(apiKeys.rolledFrom, current.id), isNull(apiKeys.revokedAt)));
    const used = successors.find((successor) => successor.lastUsedAt !== null);
    if (used) {
      throw new AppError(
        "CONFLICT",
        `This key was already rolled to ${used.prefix}…, which is in use; roll that key instead (GET /api/v1/keys lists them)`,
      );
    }
    const evict = [current.keyHash, ...successors.map((successor) => successor.keyHash)];
    for (const successor of successors) {
      await tx.update(apiKeys).set({ revokedAt: sql`now()` }).where(eq(apiKeys.id, successor.id));
    }
    const graceEnd = sql`now() + ${graceSeconds}::integer * interval '1 second'`;
    const [previous] = await tx
      .update(apiKeys)
      .set({ expiresAt: sql`least(coalesce(${apiKeys.expiresAt}, ${graceEnd}), ${graceEnd})` })
      .where(eq(apiKeys.id, current.id))
      .returning();
    if (!previous) throw new Error("rolled key vanished");
    const key = await createApiKey(tx, current.accountId, current.mode, {
      allowedIps: current.allowedCidrs,
      rolledFrom: current.id,
    });
    return { rolled: { key, previous: presentApiKey(previous) }, evict };
  });
}
