import { timingSafeEqual } from "node:crypto";
import { and, eq, isNull } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import { apiKeys } from "../db/schema/index.ts";
import { AppError } from "../errors.ts";
import type { TtlCache } from "../lib/ttl-cache.ts";
import { hashApiKey, type Mode, modeOfKey } from "./keys.ts";

export interface ApiPrincipal {
  accountId: string;
  mode: Mode;
  keyId: string;
}

const unauthenticated = (message: string) => new AppError("UNAUTHENTICATED", message);

/** Extracts a bearer token; the token itself never appears in an error message. */
export function bearerToken(authorization: string | null): string {
  if (!authorization) throw unauthenticated("Missing Authorization header; send `Authorization: Bearer <API key>`");
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match?.[1]) throw unauthenticated("Authorization header must use the Bearer scheme");
  return match[1];
}

/** Looks the key up by its hash (through `cache`, keyed by hash; revocation evicts it). */
export async function authenticateApiKey(
  db: Database,
  authorization: string | null,
  cache?: TtlCache<ApiPrincipal>,
): Promise<ApiPrincipal> {
  const key = bearerToken(authorization);
  const mode = modeOfKey(key);
  if (!mode) throw unauthenticated("API key is malformed; keys start with rg_test_ or rg_live_");
  const hash = hashApiKey(key);
  const load = async () => {
    const [row] = await db
      .select({ id: apiKeys.id, accountId: apiKeys.accountId, mode: apiKeys.mode })
      .from(apiKeys)
      .where(and(eq(apiKeys.keyHash, hash), isNull(apiKeys.revokedAt)))
      .limit(1);
    return row ? { accountId: row.accountId, mode: row.mode, keyId: row.id } : undefined;
  };
  const principal = cache ? await cache.getOrLoad(hash, load) : await load();
  if (!principal || principal.mode !== mode) throw unauthenticated("API key is unknown or revoked");
  return principal;
}

export function tokensEqual(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Admin API: off (404) without ADMIN_TOKEN; otherwise the bearer must match it. */
export function authenticateAdmin(adminToken: string | undefined, authorization: string | null): void {
  if (!adminToken) throw new AppError("NOT_FOUND", "Route not found");
  const token = bearerToken(authorization);
  if (!tokensEqual(token, adminToken)) throw unauthenticated("Admin token is not valid");
}
