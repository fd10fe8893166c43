/** A small in-process cache with a time-to-live and explicit eviction. */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: string, now = Date.now()): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V, now = Date.now()): void {
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { value, expiresAt: now + this.ttlMs });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Reads through the cache: `load` runs on a miss; an undefined result is not cached. */
  async getOrLoad(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const value = await load();
    if (value !== undefined) this.set(key, value);
    return value;
  }
}
