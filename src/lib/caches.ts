import type { DbHandle, Unlisten } from "../db/client.ts";
import type { Logger } from "../logger.ts";

/** What a process-wide cache must offer to be evicted by name. */
export interface Evictable {
  clear(): void;
  delete(key: string): void;
}

const channel = "vend_cache_evict";

/**
 * Evicts entries of `caches` (by name) when any process on the same database asks to: hot-path lookups
 * live briefly and an operator's change (a key revoked, a product edited) must not wait for their TTL.
 */
export function subscribeCacheEviction<C extends { [Name in keyof C]: Evictable }>(
  database: DbHandle,
  caches: C,
  logger: Logger,
): Promise<Unlisten> {
  return database.listen(channel, (payload) => {
    const [name, key] = payload.split(":", 2) as [string, string | undefined];
    const cache: Evictable | undefined = Object.hasOwn(caches, name) ? caches[name as keyof C] : undefined;
    if (!cache) return logger.warn({ payload }, "unknown cache eviction");
    if (key === undefined || key === "*") cache.clear();
    else cache.delete(key);
  });
}

/** Evicts here at once and tells every other process. */
export async function evictEverywhere<C extends { [Name in keyof C]: Evictable }>(
  database: DbHandle,
  caches: C,
  name: keyof C & string,
  key = "*",
): Promise<void> {
  const cache: Evictable = caches[name];
  if (key === "*") cache.clear();
  else cache.delete(key);
  await database.notify(channel, `${name}:${key}`);
}
