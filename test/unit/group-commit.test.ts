import { describe, expect, test } from "bun:test";
import { groupCommit } from "../../src/lib/group-commit.ts";

/** A batch runner whose calls end when the test says so; it records each call's key and items. */
function gatedRunner() {
  const calls: [string, number[]][] = [];
  const gates: (() => void)[] = [];
  const run = async (key: string, items: number[]): Promise<(number | Error)[]> => {
    calls.push([key, items]);
    await new Promise<void>((resolve) => gates.push(resolve));
    return items.map((n) => (n < 0 ? new Error(`bad ${n}`) : n * 10));
  };
  return { calls, run, release: () => gates.shift()?.() };
}

describe("group commit", () => {
  test("an item for an idle key goes at once; items arriving meanwhile go together in the next call", async () => {
    const { calls, run, release } = gatedRunner();
    const submit = groupCommit(run, 100);
    const first = submit("k", 1);
    expect(calls).toEqual([["k", [1]]]);
    const later = [submit("k", 2), submit("k", 3), submit("k", 4)];
    // Another key does not wait for this one.
    const other = submit("other", 5);
    expect(calls).toEqual([
      ["k", [1]],
      ["other", [5]],
    ]);
    release();
    expect(await first).toBe(10);
    await Bun.sleep(0);
    expect(calls.at(-1)).toEqual(["k", [2, 3, 4]]);
    release();
    release();
    expect(await Promise.all(later)).toEqual([20, 30, 40]);
    expect(await other).toBe(50);
  });

  test("a call takes at most maxBatch items; one item's failure fails only that item", async () => {
    const { calls, run, release } = gatedRunner();
    const submit = groupCommit(run, 2);
    const results = [0, 1, -2, 3].map((n) => submit("k", n).catch((error: Error) => error.message));
    release();
    await Bun.sleep(0);
    release();
    await Bun.sleep(0);
    release();
    expect(await Promise.all(results)).toEqual([0, 10, "bad -2", 30]);
    expect(calls.map(([, items]) => items)).toEqual([[0], [1, -2], [3]]);
  });

  test("a call that throws fails each of its items, and the next call still goes", async () => {
    let calls = 0;
    const submit = groupCommit<number, number>(async (_key, items) => {
      calls += 1;
      if (calls === 1) throw new Error("statement failed");
      return items;
    }, 10);
    expect(await submit("k", 1).catch((error: Error) => error.message)).toBe("statement failed");
    expect(await submit("k", 2)).toBe(2);
  });
});
