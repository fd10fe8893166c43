import type { ApiPrincipal } from "../auth/service.ts";
import type { ProductRow } from "../catalogue/service.ts";
import type { DbHandle, Unlisten } from "../db/client.ts";
import type { Logger } from "../logger.ts";
import { TtlCache } from "./ttl-cache.ts";

/**
 * Hot-path lookups every vend makes. Entries live briefly and are evicted in every process
 * on one database by NOTIFY when an operator changes them (key revoked, product edited).
 */
export interface Caches {
  apiKeys: TtlCache<ApiPrincipal>;
  products: TtlCache<ProductRow>;
}

export type CacheName = keyof Caches;
const channel = "vend_cache_evict";

export function createCaches(): Caches {
  return { apiKeys: new TtlCache(60_000), products: new TtlCache(30_000) };
}

export function subscribeCacheEviction(database: DbHandle, caches: Caches, logger: Logger): Promise<Unlisten> {
  return database.listen(channel, (payload) => {
    const [name, key] = payload.split(":", 2) as [string, string | undefined];
    const cache = caches[name as CacheName];
    if (!cache) return logger.warn({ payload }, "unknown cache eviction");
    if (key === undefined || key === "*") cache.clear();
    else cache.delete(key);
  });
}

/** Evicts here at once and tells every other process. */
export async function evictEverywhere(database: DbHandle, caches: Caches, name: CacheName, key = "*"): Promise<void> {
  if (key === "*") caches[name].clear();
  else caches[name].delete(key);
  await database.notify(channel, `${name}:${key}`);
}
