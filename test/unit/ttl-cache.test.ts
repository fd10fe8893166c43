import { describe, expect, test } from "bun:test";
import { TtlCache } from "../../src/lib/ttl-cache.ts";

describe("TtlCache", () => {
  test("concurrent loads of one key call the loader once; a later read is a hit", async () => {
    const cache = new TtlCache<string>(30_000);
    let calls = 0;
    let finish: (value: string) => void = () => {};
    const load = () => {
      calls++;
      return new Promise<string>((resolve) => {
        finish = resolve;
      });
    };
    const waiting = [cache.getOrLoad("k", load), cache.getOrLoad("k", load), cache.getOrLoad("k", load)];
    finish("v");
    expect(await Promise.all(waiting)).toEqual(["v", "v", "v"]);
    expect(await cache.getOrLoad("k", load)).toBe("v");
    expect(calls).toBe(1);
  });

  test("an entry lives its time to live, then is gone", () => {
    const cache = new TtlCache<string>(1_000);
    const t0 = 5_000_000;
    cache.set("k", "v", t0);
    expect(cache.get("k", t0 + 1_000)).toBe("v");
    expect(cache.get("k", t0 + 1_001)).toBeUndefined();
  });

  test("an expired entry is loaded again", async () => {
    const cache = new TtlCache<string>(20);
    let calls = 0;
    const load = async () => `v${++calls}`;
    expect(await cache.getOrLoad("k", load)).toBe("v1");
    await Bun.sleep(40);
    expect(await cache.getOrLoad("k", load)).toBe("v2");
  });

  test("when full, the least recently used entry goes, not the whole cache", () => {
    const cache = new TtlCache<number>(30_000, 2);
    cache.set("a", 1);
    cache.set("b", 2);
    cache.get("a");
    cache.set("c", 3);
    expect([cache.get("a"), cache.get("b"), cache.get("c")]).toEqual([1, undefined, 3]);
  });

  test("an undefined load is not cached; a failed one is not either", async () => {
    const cache = new TtlCache<string>(30_000);
    expect(await cache.getOrLoad("k", async () => undefined)).toBeUndefined();
    await expect(cache.getOrLoad("k", () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    expect(await cache.getOrLoad("k", async () => "v")).toBe("v");
  });

  test("an entry evicted while it loads is not stored, and its callers still get the value", async () => {
    const cache = new TtlCache<string>(30_000);
    let finish: (value: string) => void = () => {};
    const loading = cache.getOrLoad("k", () => new Promise<string>((resolve) => (finish = resolve)));
    cache.delete("k");
    finish("old");
    expect(await loading).toBe("old");
    expect(cache.get("k")).toBeUndefined();
  });
});
