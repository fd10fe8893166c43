import { afterEach, describe, expect, test } from "bun:test";
import postgres from "postgres";

// postgres.js (3.4.9) handed each statement to the idle connection that had waited longest, so a light
// load cycled through every connection of the pool: each of its backends woke in turn, planned the hot
// statements for itself (a prepared statement keeps its plan per connection) and kept its own catalog
// caches warm. An idle worker's three polls every 5 s went to ten backends (their CPU at rest 5-6 ms/s
// against 1-2 once they kept to a few, from /proc). Patched in patches/postgres+3.4.9.patch: the pool takes
// the connection used last, as pg-pool, HikariCP and Rails do.
const url = process.env.DATABASE_URL;
let sql: postgres.Sql | undefined;

afterEach(async () => {
  await sql?.end({ timeout: 1 }).catch(() => undefined);
  sql = undefined;
});

const backendOf = async (db: postgres.Sql) => (await db<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]?.pid;

describe.skipIf(!url)("the pool's choice of an idle connection", () => {
  test("one statement at a time keeps to the connection used last, after a burst opened five", async () => {
    sql = postgres(url ?? "", { max: 5, onnotice: () => {} });
    const db = sql;
    // Five at once: five connections, each busy until all five have started.
    const burst = await Promise.all(
      Array.from({ length: 5 }, () => db<{ pid: number }[]>`select pg_backend_pid() as pid, pg_sleep(0.05)`),
    );
    expect(new Set(burst.map((rows) => rows[0]?.pid)).size).toBe(5);

    const sequential: (number | undefined)[] = [];
    for (let n = 0; n < 20; n++) sequential.push(await backendOf(db));
    // Round robin would have given each of the five four statements.
    expect(new Set(sequential).size).toBe(1);
  });

  test("a second statement while the first runs takes another connection, then both stay in use", async () => {
    sql = postgres(url ?? "", { max: 5, onnotice: () => {} });
    const db = sql;
    await Promise.all(Array.from({ length: 5 }, () => db`select pg_sleep(0.05)`));
    const pairs: number[][] = [];
    for (let n = 0; n < 10; n++) {
      const both = await Promise.all([backendOf(db), db<{ pid: number }[]>`select pg_backend_pid() as pid`]);
      pairs.push([both[0] ?? 0, both[1][0]?.pid ?? 0]);
    }
    // Each pair ran on two connections (nothing is pipelined onto a busy one while another is idle) and the
    // same two every time: the three others stayed idle.
    for (const [first, second] of pairs) expect(first).not.toBe(second);
    expect(new Set(pairs.flat()).size).toBe(2);
  });

  test("a transaction takes the connection used last too", async () => {
    sql = postgres(url ?? "", { max: 5, onnotice: () => {} });
    const db = sql;
    await Promise.all(Array.from({ length: 5 }, () => db`select pg_sleep(0.05)`));
    const last = await backendOf(db);
    const inside = await db.begin(async (tx) => (await tx<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]?.pid);
    expect(inside).toBe(last);
    expect(await backendOf(db)).toBe(last);
  });
});
