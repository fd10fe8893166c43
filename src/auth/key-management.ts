import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { apiKeys } from "../db/schema/index.ts";
import { type Executor, withTransaction } from "../db/transaction.ts";
import { AppError, notFound, validationError } from "../errors.ts";
import type { ApiPrincipal } from "../lib/scope.ts";
import { addressAllowed, parseAllowList } from "./allow-list.ts";
import { createApiKey, presentApiKey } from "./api-key-records.ts";
import { hashApiKey } from "./keys.ts";

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

/** A key whose state this process changed, by hash: the process knows it at once, the others by NOTIFY. */
export interface ChangedKey {
  hash: string;
  key: ApiKey;
}

/** `now() + greatest(seconds, propagation)`: the instant a change made now takes effect on every process. */
export const takesEffect = (propagationMs: number, seconds = 0) =>
  sql`now() + greatest(${seconds}::integer * 1000, ${propagationMs}::integer) * interval '1 millisecond'`;

/** A key this call ended now (revoked, or expired by a roll with no grace): its instant is recorded once in force. */
export interface EndedKey {
  keyId: string;
  end: "revokedAt" | "expiresAt";
}

/**
 * Replaces the caller's key: a new key with its account, mode and allow-list, and the caller's key expiring
 * after `graceSeconds`. A grace of 0 ends it now, and the caller records the instant every process refuses it
 * (`ended`); a grace above 0 never ends it sooner than `propagationMs`, so every process knows the expiry
 * before it comes. An earlier expiry stays. A key has at most one working successor: one never used is
 * revoked now (ended) and replaced (a retry after a lost answer); one already used makes this a 409. Returns
 * the keys it changed or created.
 */
export async function rollApiKey(
  db: Executor,
  caller: ApiPrincipal,
  graceSeconds: number,
  propagationMs: number,
): Promise<{ rolled: ApiKeyRolled; changed: ChangedKey[]; ended: EndedKey[] }> {
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
    const changed: ChangedKey[] = [];
    const ended: EndedKey[] = [];
    for (const successor of successors) {
      const [revoked] = await tx.update(apiKeys).set({ revokedAt: sql`now()` }).where(eq(apiKeys.id, successor.id)).returning();
      if (revoked) changed.push({ hash: revoked.keyHash, key: presentApiKey(revoked) });
      ended.push({ keyId: successor.id, end: "revokedAt" });
    }
    const graceEnd = graceSeconds === 0 ? sql`now()` : takesEffect(propagationMs, graceSeconds);
    const endsNow = graceSeconds === 0 && (current.expiresAt === null || current.expiresAt.getTime() > Date.now());
    if (endsNow) ended.push({ keyId: current.id, end: "expiresAt" });
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
    changed.push({ hash: previous.keyHash, key: presentApiKey(previous) }, { hash: hashApiKey(key.key), key });
    return { rolled: { key, previous: presentApiKey(previous) }, changed, ended };
  });
}

/** A new allow-list for a key of the caller's account and mode (null: any address). */
export interface AllowListChange {
  keyId: string;
  allowedIps: string[] | null;
  /** Let the caller's own key get a list that leaves out `clientAddress`. */
  allowLockout: boolean;
  /** Where the request came from (as authentication saw it). */
  clientAddress: string | undefined;
}

/**
 * Replaces a key's allow-list: 404 for another account's or mode's key, 409 for a revoked one, 400 for a bad
 * entry or for a list that would lock the calling key out of the address it is calling from. Returns the key
 * as changed, with its hash.
 */
export async function updateKeyAllowList(
  db: Executor,
  caller: ApiPrincipal,
  change: AllowListChange,
): Promise<{ key: ApiKey; changed: ChangedKey }> {
  const parsed = change.allowedIps ? parseAllowList(change.allowedIps) : null;
  if (parsed && parsed.errors.length > 0) throw validationError(parsed.errors);
  const cidrs = parsed?.cidrs ?? null;
  const locksOut = cidrs !== null && !addressAllowed(change.clientAddress ?? "", cidrs);
  if (change.keyId === caller.keyId && locksOut && !change.allowLockout) {
    const from = change.clientAddress ?? "an unknown address";
    const message = `does not include ${from}, where this request came from: the key would be locked out (allow_lockout: true does it anyway)`;
    throw validationError([{ field: "allowed_ips", message }]);
  }
  return withTransaction(db, async (tx) => {
    const ofCaller = and(eq(apiKeys.id, change.keyId), eq(apiKeys.accountId, caller.accountId), eq(apiKeys.mode, caller.mode));
    const [target] = await tx.select().from(apiKeys).where(ofCaller).for("update");
    if (!target) throw notFound("API key");
    if (target.revokedAt) throw new AppError("CONFLICT", "This API key is revoked; its allow-list can no longer change");
    const [updated] = await tx.update(apiKeys).set({ allowedCidrs: cidrs }).where(eq(apiKeys.id, target.id)).returning();
    if (!updated) throw new Error("updated key vanished");
    const key = presentApiKey(updated);
    return { key: { ...key, current: updated.id === caller.keyId }, changed: { hash: updated.keyHash, key } };
  });
}
