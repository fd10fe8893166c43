import { describe, expect, test } from "bun:test";
import { GroupCommit } from "../../src/lib/group-commit.ts";

/** A batch runner whose calls end when the test says so; it records each call's items. */
function gatedRunner() {
  const calls: number[][] = [];
  const gates: (() => void)[] = [];
  const run = async (items: number[]): Promise<PromiseSettledResult<number>[]> => {
    calls.push(items);
    await new Promise<void>((resolve) => gates.push(resolve));
    return items.map((n) =>
      n < 0 ? { status: "rejected", reason: new Error(`bad ${n}`) } : { status: "fulfilled", value: n * 10 },
    );
  };
  return { calls, run, release: () => gates.shift()?.() };
}

describe("group commit", () => {
  test("an item submitted when idle goes at once; items arriving meanwhile go together in the next call", async () => {
    const { calls, run, release } = gatedRunner();
    const group = new GroupCommit(run, 100);
    const first = group.submit(1);
    await Bun.sleep(0);
    expect(calls).toEqual([[1]]);
    const later = [group.submit(2), group.submit(3), group.submit(4)];
    await Bun.sleep(0);
    expect(calls).toEqual([[1]]);
    release();
    expect(await first).toBe(10);
    await Bun.sleep(0);
    expect(calls).toEqual([[1], [2, 3, 4]]);
    release();
    expect(await Promise.all(later)).toEqual([20, 30, 40]);
  });

  test("a call takes at most maxBatch items; one item's failure fails only that item", async () => {
    const { calls, run, release } = gatedRunner();
    const group = new GroupCommit(run, 2);
    const results = [1, -2, 3].map((n) => group.submit(n).catch((error: Error) => error.message));
    await Bun.sleep(0);
    release();
    await Bun.sleep(0);
    release();
    expect(await Promise.all(results)).toEqual([10, "bad -2", 30]);
    expect(calls).toEqual([[1, -2], [3]]);
  });

  test("a call that throws fails each of its items, and the next call still goes", async () => {
    let calls = 0;
    const group = new GroupCommit<number, number>(async (items) => {
      calls += 1;
      if (calls === 1) throw new Error("statement failed");
      return items.map((n) => ({ status: "fulfilled", value: n }));
    }, 10);
    expect(await group.submit(1).catch((error: Error) => error.message)).toBe("statement failed");
    expect(await group.submit(2)).toBe(2);
  });
});
