import { and, eq, isNull } from "drizzle-orm";
import { bootstrapOperator, findOperatorByToken, isOperatorToken, localBootstrapOperator } from "../admin/operators.ts";
import type { Database } from "../db/client.ts";
import { apiKeys } from "../db/schema/index.ts";
import { AppError } from "../errors.ts";
import type { ApiPrincipal, OperatorPrincipal, Principal } from "../lib/scope.ts";

import { bearerOf, secretsEqual } from "../lib/secrets.ts";
import type { TtlCache } from "../lib/ttl-cache.ts";
import type { Logger } from "../logger.ts";
import { addressAllowed } from "./allow-list.ts";
import type { AuthGuard } from "./guard.ts";
import type { KeyUsageRecorder } from "./key-usage.ts";
import { hashApiKey, keysIssued, modeOfKey } from "./keys.ts";

const unauthenticated = (message: string) => new AppError("UNAUTHENTICATED", message);

/** Extracts a bearer token; the token itself never appears in an error message. */
export function bearerToken(authorization: string | null): string {
  if (!authorization) throw unauthenticated("Missing Authorization header; send `Authorization: Bearer <API key>`");
  const token = bearerOf(authorization);
  if (!token) throw unauthenticated("Authorization header must use the Bearer scheme");
  return token;
}

/** What stands before the key table: the failure throttle for the caller's address, and its memory. */
export interface AuthDefences {
  guard: AuthGuard;
  /** The client's address (see RequestContext.ip). */
  client: string;
}

/** Runs `check`; an UNAUTHENTICATED it throws counts against the client's failure budget. */
async function countingFailures<T>(defences: AuthDefences | undefined, check: () => T | Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    if (defences && error instanceof AppError && error.code === "UNAUTHENTICATED") defences.guard.recordFailure(defences.client);
    throw error;
  }
}

/**
 * An API key as authentication remembers it: its scope, and what is checked at every use (expiry and the
 * address allow-list), so a cached key expires on time. Changing either evicts it everywhere.
 */
export interface KnownApiKey extends ApiPrincipal {
  /** Epoch milliseconds; null: never. */
  expiresAt: number | null;
  /** Canonical CIDR blocks; null: any address. */
  allowedCidrs: string[] | null;
}

async function findApiKey(db: Database, hash: string, guard: AuthGuard | undefined): Promise<KnownApiKey | undefined> {
  if (guard?.isUnknownKey(hash)) return undefined;
  const issuedBefore = keysIssued();
  const [row] = await db
    .select({
      id: apiKeys.id,
      accountId: apiKeys.accountId,
      mode: apiKeys.mode,
      expiresAt: apiKeys.expiresAt,
      allowedCidrs: apiKeys.allowedCidrs,
    })
    .from(apiKeys)
    .where(and(eq(apiKeys.keyHash, hash), isNull(apiKeys.revokedAt)))
    .limit(1);
  if (!row) guard?.rememberUnknownKey(hash, issuedBefore);
  return row
    ? {
        accountId: row.accountId,
        mode: row.mode,
        keyId: row.id,
        expiresAt: row.expiresAt?.getTime() ?? null,
        allowedCidrs: row.allowedCidrs,
      }
    : undefined;
}

/** Refuses an expired key (401) and a key used from outside its allow-list (403, before anything is done). */
function checkKeyUse(key: KnownApiKey, client: string | undefined, now: number): void {
  if (key.expiresAt !== null && key.expiresAt <= now) throw unauthenticated("API key has expired");
  if (key.allowedCidrs && !addressAllowed(client ?? "", key.allowedCidrs)) {
    throw new AppError("IP_NOT_ALLOWED", `This API key may not be used from ${client ?? "an unknown address"}`);
  }
}

/**
 * Looks the key up by its hash. A key in `known` (keyed by hash; revocation evicts it everywhere) is
 * answered at once, whatever the client's failure budget says; anything else must first be admitted
 * by the throttle, and a failure counts against the client. Either way an expired key is refused (401)
 * to the millisecond, and a key with an allow-list used from another address is refused (403).
 */
export async function authenticateApiKey(
  db: Database,
  authorization: string | null,
  known?: TtlCache<KnownApiKey>,
  defences?: AuthDefences,
  now = Date.now(),
): Promise<KnownApiKey> {
  const key = bearerOf(authorization);
  const mode = key ? modeOfKey(key) : null;
  const hash = key && mode ? hashApiKey(key) : undefined;
  const cached = hash ? known?.get(hash) : undefined;
  if (cached && cached.mode === mode) {
    checkKeyUse(cached, defences?.client, now);
    return cached;
  }
  defences?.guard.admit(defences.client);
  return countingFailures(defences, async () => {
    bearerToken(authorization);
    if (!mode || !hash) throw unauthenticated("API key is malformed; keys start with rg_test_ or rg_live_");
    const principal = await findApiKey(db, hash, defences?.guard);
    if (!principal || principal.mode !== mode) throw unauthenticated("API key is unknown or revoked");
    known?.set(hash, principal);
    checkKeyUse(principal, defences?.client, now);
    return principal;
  });
}

/**
 * Admin API. The bearer is the bootstrap `ADMIN_TOKEN` (the super-operator `ADMIN_TOKEN`, role admin) or an
 * operator's `op_` token, looked up by its hash on every call so a revocation takes effect at once. Without
 * `ADMIN_TOKEN` and without an operator token the admin API does not exist (404). These are secrets an
 * operator holds, so an address over its failure budget is refused even with the right one.
 */
export async function authenticateAdmin(
  db: Database,
  adminToken: string | undefined,
  authorization: string | null,
  defences?: AuthDefences,
): Promise<OperatorPrincipal> {
  const given = bearerOf(authorization);
  const operatorToken = given !== undefined && isOperatorToken(given);
  if (!adminToken && !operatorToken) throw new AppError("NOT_FOUND", "Route not found");
  defences?.guard.admit(defences.client);
  return countingFailures(defences, async () => {
    const token = bearerToken(authorization);
    if (adminToken && secretsEqual(token, adminToken)) return bootstrapOperator;
    const operator = operatorToken ? await findOperatorByToken(db, token) : undefined;
    if (!operator) throw unauthenticated(operatorToken ? "Operator token is unknown or revoked" : "Admin token is not valid");
    return operator;
  });
}

/** The bearer is this process's local bootstrap secret (set only by an embedded `npm start`). */
function isLocalAdminSecret(secret: string | undefined, authorization: string | null): boolean {
  const given = bearerOf(authorization);
  return secret !== undefined && given !== undefined && secretsEqual(given, secret);
}

/**
 * The authentication the http layer runs before each operation, by its security scheme: the operator (admin
 * token or operator token), an API key (the principal), or for provider callbacks only the failure budget (the provider's own token
 * and signature are checked by its handler). It reads `deps` at each call, so a swapped database is used.
 */
export function createAuthenticate(deps: {
  db: Database;
  config: { adminToken?: string };
  localAdminSecret?: string;
  authGuard: AuthGuard;
  caches: { apiKeys: TtlCache<KnownApiKey> };
  keyUsage: KeyUsageRecorder;
  logger: Logger;
}) {
  return async (security: string, authorization: string | null, client: string, local = false): Promise<Principal> => {
    const defences = { guard: deps.authGuard, client };
    if (security === "admin" && local && isLocalAdminSecret(deps.localAdminSecret, authorization)) return localBootstrapOperator;
    if (security === "admin") return authenticateAdmin(deps.db, deps.config.adminToken, authorization, defences);
    if (security === "provider") deps.authGuard.admit(client);
    if (security !== "apiKey") return null;
    const principal = await authenticateApiKey(deps.db, authorization, deps.caches.apiKeys, defences);
    deps.keyUsage.record(deps.db, deps.logger, principal.keyId);
    return principal;
  };
}
