import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { createPartitionsAhead, partitionedNow } from "../../src/db/partitions.ts";
import { queryRows } from "../../src/db/rows.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase({ maxConnections: 2 });
});
afterAll(() => database.drop());

const tableCount = async () => {
  const [row] = await queryRows<{ n: number }>(
    database.handle.db,
    sql`select count(*)::int as n from pg_class where relnamespace = 'public'::regnamespace and relkind in ('r', 'p')`,
  );
  return Number(row?.n ?? -1);
};

// The runner's task on the default install: the history is not partitioned, so it finds nothing to do.
describe("partitions ahead on an unpartitioned database", () => {
  test("finds no partitioned table, makes nothing", async () => {
    const before = await tableCount();
    expect(await partitionedNow(database.handle.db)).toEqual([]);
    expect(await createPartitionsAhead(database.handle.db, 3)).toBe(0);
    expect(await tableCount()).toBe(before);
  });

  test("the history tables' keys include created_at, as partitioning needs", async () => {
    const rows = await queryRows<{ table: string; columns: string }>(
      database.handle.db,
      sql`select c.relname as table, string_agg(a.attname, ',' order by k.n) as columns
          from pg_constraint x join pg_class c on c.oid = x.conrelid
          cross join lateral unnest(x.conkey) with ordinality k(attnum, n)
          join pg_attribute a on a.attrelid = x.conrelid and a.attnum = k.attnum
          where x.contype = 'p' and c.relname in ('transactions', 'ledger_entries', 'events')
          group by c.relname order by c.relname`,
    );
    expect(rows).toEqual([
      { table: "events", columns: "id,created_at" },
      { table: "ledger_entries", columns: "id,created_at" },
      { table: "transactions", columns: "id,created_at" },
    ]);
  });
});
