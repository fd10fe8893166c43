import { and, eq, isNull, or, sql } from "drizzle-orm";
import {
  bootstrapOperator,
  findOperatorByToken,
  hashOperatorToken,
  isOperatorToken,
  localBootstrapOperator,
} from "../admin/operators.ts";
import type { Database } from "../db/client.ts";
import { apiKeys } from "../db/schema/index.ts";
import { AppError } from "../errors.ts";
import type { ApiPrincipal, OperatorPrincipal, Principal } from "../lib/scope.ts";

import { bearerOf, secretsEqual } from "../lib/secrets.ts";
import type { Logger } from "../logger.ts";
import { addressAllowed } from "./allow-list.ts";
import { type CredentialRegistry, stillWorks } from "./credential-registry.ts";
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
 * An API key as authentication knows it: its scope, and what is checked at every use (expiry and the
 * address allow-list).
 */
export interface KnownApiKey extends ApiPrincipal {
  /** Epoch milliseconds on the database's clock; null: never. */
  expiresAt: number | null;
  /** Canonical CIDR blocks; null: any address. */
  allowedCidrs: string[] | null;
}

/** A key that works now by the database's own clock (a revocation still to take effect included), or undefined. */
async function findApiKey(
  db: Database,
  hash: string,
  guard: AuthGuard | undefined,
): Promise<{ key: KnownApiKey; expired: boolean } | undefined> {
  if (guard?.isUnknownKey(hash)) return undefined;
  const issuedBefore = keysIssued();
  const [row] = await db
    .select({
      id: apiKeys.id,
      accountId: apiKeys.accountId,
      mode: apiKeys.mode,
      expiresAt: apiKeys.expiresAt,
      allowedCidrs: apiKeys.allowedCidrs,
      expired: sql<boolean>`coalesce(${apiKeys.expiresAt} <= clock_timestamp(), false)`,
    })
    .from(apiKeys)
    .where(and(eq(apiKeys.keyHash, hash), or(isNull(apiKeys.revokedAt), sql`${apiKeys.revokedAt} > clock_timestamp()`)))
    .limit(1);
  if (!row) guard?.rememberUnknownKey(hash, issuedBefore);
  if (!row) return undefined;
  const key = {
    accountId: row.accountId,
    mode: row.mode,
    keyId: row.id,
    expiresAt: row.expiresAt?.getTime() ?? null,
    allowedCidrs: row.allowedCidrs,
  };
  return { key, expired: row.expired };
}

/** Refuses a key used from outside its allow-list (403, before anything is done). */
function checkKeyAddress(key: KnownApiKey, client: string | undefined): void {
  if (key.allowedCidrs && !addressAllowed(client ?? "", key.allowedCidrs)) {
    throw new AppError("IP_NOT_ALLOWED", `This API key may not be used from ${client ?? "an unknown address"}`);
  }
}

/**
 * How long an unknown hash waits for a notification already on its way before the failure budget is asked. Every
 * guessed key of a flood waits it too (100 ms made a 2,000-key flood 25 s longer, and its heartbeats with it); on a
 * loaded machine a key created a moment before may still miss it, and is 429 from an address over its budget
 * until its notification arrives (milliseconds later).
 */
const notificationSlackMs = 10;

/**
 * A hash the registry does not know may be a credential created a moment ago on another process, its
 * notification still on its way. It gets `notificationSlackMs` first (a notification committed before the
 * request was sent is normally here by then), then the failure budget is asked (429 past it), then it waits
 * for the next heartbeat, which proves every credential created before the request arrived is known. No
 * database work either way.
 */
async function lateArrival<T>(
  registry: CredentialRegistry,
  defences: AuthDefences | undefined,
  arrived: number,
  find: () => T | undefined,
): Promise<T | undefined> {
  if (!registry.synchronous) await Bun.sleep(notificationSlackMs);
  const found = find();
  if (found) return found;
  defences?.guard.admit(defences.client);
  await registry.caughtUpWith(arrived);
  return find();
}

const expired = () => unauthenticated("API key has expired");
const unknownKey = () => unauthenticated("API key is unknown or revoked");

/**
 * Where a credential is looked up: the process's credential registry while it is current, else the database;
 * the failure throttle in front; `now` is the process's clock unless a test gives one.
 */
export interface CredentialSources {
  db: Database;
  registry?: CredentialRegistry;
  defences?: AuthDefences;
  now?: number;
}

/**
 * Looks the key up by its hash. While the process's credential registry is current, the answer comes from
 * memory: a key that works is served whatever the client's failure budget says (the throttle is never asked),
 * and anything else is refused without the database and counts against the client. Otherwise the throttle
 * admits the request first and the database answers (on its own clock). Either way an expired or revoked key
 * is refused (401) from the instant recorded, and a key with an allow-list used from another address (403).
 */
export async function authenticateApiKey(sources: CredentialSources, authorization: string | null): Promise<KnownApiKey> {
  const { db, registry, defences, now = Date.now() } = sources;
  const key = bearerOf(authorization);
  const mode = key ? modeOfKey(key) : null;
  const hash = key && mode ? hashApiKey(key) : undefined;
  if (hash && mode && registry?.isCurrent(now)) {
    let known = registry.apiKey(hash);
    if (!known) known = await lateArrival(registry, defences, now, () => registry.apiKey(hash));
    const databaseNow = registry.databaseNow();
    if (known && known.mode === mode && stillWorks(known, databaseNow)) {
      const principal = {
        accountId: known.accountId,
        mode: known.mode,
        keyId: known.keyId,
        expiresAt: known.expiresAt,
        allowedCidrs: known.allowedCidrs,
      };
      checkKeyAddress(principal, defences?.client);
      return principal;
    }
    // A key that existed (its holder has the secret) but no longer works is refused from memory: it costs
    // nothing, guesses nothing, and is not throttled or counted. Anything else counts as a failure.
    if (known && known.mode === mode) {
      const revoked = known.revokedAt !== null && known.revokedAt <= databaseNow;
      throw revoked ? unknownKey() : expired();
    }
    defences?.guard.admit(defences.client);
    return countingFailures(defences, () => {
      throw unknownKey();
    });
  }
  defences?.guard.admit(defences.client);
  return countingFailures(defences, async () => {
    bearerToken(authorization);
    if (!mode || !hash) throw unauthenticated("API key is malformed; keys start with rg_test_ or rg_live_");
    const found = await findApiKey(db, hash, defences?.guard);
    if (!found || found.key.mode !== mode) throw unknownKey();
    if (found.expired) throw expired();
    checkKeyAddress(found.key, defences?.client);
    return found.key;
  });
}

/**
 * Admin API. The bearer is the bootstrap `ADMIN_TOKEN` (the super-operator, role admin), compared before
 * anything else, or an operator's `op_` token: from the credential registry while it is current, else from
 * the database. A right token is served whatever the address's failure budget says; a wrong one is
 * throttled and counted. Without `ADMIN_TOKEN` and without an operator token the admin API does not exist (404).
 */
export async function authenticateAdmin(
  sources: CredentialSources,
  adminToken: string | undefined,
  authorization: string | null,
): Promise<OperatorPrincipal> {
  const { db, registry, defences, now = Date.now() } = sources;
  const given = bearerOf(authorization);
  const operatorToken = given !== undefined && isOperatorToken(given);
  if (!adminToken && !operatorToken) throw new AppError("NOT_FOUND", "Route not found");
  if (adminToken && given !== undefined && secretsEqual(given, adminToken)) return bootstrapOperator;
  const current = operatorToken && registry?.isCurrent(now);
  if (current && registry) {
    const hash = hashOperatorToken(given);
    const known = registry.operator(hash) ?? (await lateArrival(registry, defences, now, () => registry.operator(hash)));
    if (known && stillWorks(known, registry.databaseNow()))
      return { operatorId: known.operatorId, name: known.name, role: known.role };
  }
  defences?.guard.admit(defences.client);
  return countingFailures(defences, async () => {
    bearerToken(authorization);
    const operator = operatorToken && !current ? await findOperatorByToken(db, given) : undefined;
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
 * token or operator token), an API key (the principal), or nothing for provider callbacks (their handler checks
 * the provider's token and signature first, and only a callback that fails them meets the failure budget).
 * It reads `deps` at each call, so a swapped database is used.
 */
export function createAuthenticate(deps: {
  db: Database;
  config: { adminToken?: string };
  localAdminSecret?: string;
  authGuard: AuthGuard;
  credentials: CredentialRegistry;
  keyUsage: KeyUsageRecorder;
  logger: Logger;
}) {
  return async (security: string, authorization: string | null, client: string, local = false): Promise<Principal> => {
    const defences = { guard: deps.authGuard, client };
    if (security === "admin" && local && isLocalAdminSecret(deps.localAdminSecret, authorization)) return localBootstrapOperator;
    if (security === "admin")
      return authenticateAdmin({ db: deps.db, registry: deps.credentials, defences }, deps.config.adminToken, authorization);
    if (security !== "apiKey") return null;
    const principal = await authenticateApiKey({ db: deps.db, registry: deps.credentials, defences }, authorization);
    deps.keyUsage.record(deps.db, deps.logger, principal.keyId);
    return principal;
  };
}
