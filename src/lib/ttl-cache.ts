import { LRUCache } from "lru-cache";

type Load<V> = () => Promise<V | undefined>;

/**
 * An in-process cache (lru-cache): an entry lives `ttlMs`, the least recently used one goes when `maxEntries`
 * are held, and concurrent loads of one key share one call of the loader.
 */
export class TtlCache<V extends {}> {
  private readonly cache: LRUCache<string, V, Load<V>>;
  /** The instant a caller gave (tests pass their own); the process clock otherwise. */
  private instant: number | undefined;

  constructor(ttlMs: number, maxEntries = 10_000) {
    this.cache = new LRUCache<string, V, Load<V>>({
      ttl: ttlMs,
      max: maxEntries,
      // Read the clock at every look-up (no timer keeping a cached instant).
      ttlResolution: 0,
      perf: { now: () => this.instant ?? Date.now() },
      fetchMethod: (_key, _stale, { context }) => context(),
      // An entry evicted while it loads (an operator's edit) is not stored, but its waiting callers get the value.
      ignoreFetchAbort: true,
    });
  }

  get(key: string, now?: number): V | undefined {
    return this.at(now, () => this.cache.get(key));
  }

  set(key: string, value: V, now?: number): void {
    this.at(now, () => this.cache.set(key, value));
  }

  delete(key: string): void {
    this.cache.delete(key);
  }

  clear(): void {
    this.cache.clear();
  }

  /** Reads through the cache: `load` runs on a miss, once for concurrent callers; an undefined result is not cached. */
  getOrLoad(key: string, load: Load<V>): Promise<V | undefined> {
    return this.cache.fetch(key, { context: load });
  }

  private at<T>(now: number | undefined, run: () => T): T {
    this.instant = now;
    try {
      return run();
    } finally {
      this.instant = undefined;
    }
  }
}
