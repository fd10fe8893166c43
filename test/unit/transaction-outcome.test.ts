import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { queryRows } from "../../src/db/rows.ts";
import { withTransaction } from "../../src/db/transaction.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";

// A transaction whose statement failed commits nothing; withTransaction must then fail, never return as if
// it had saved (the embedded engine, like PostgreSQL, answers such a COMMIT with ROLLBACK and no error).
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase({ maxConnections: 2 });
  await database.handle.db.execute(sql`create table outcome_probe (note text primary key)`);
});
afterAll(() => database.drop());

const notes = async () =>
  (await queryRows<{ note: string }>(database.handle.db, sql`select note from outcome_probe order by note`)).map((r) => r.note);

describe("withTransaction and a statement that failed inside it", () => {
  test("a failure swallowed by the work still fails the transaction, and nothing of it is saved", async () => {
    const attempt = withTransaction(database.handle.db, async (tx) => {
      await tx.execute(sql`insert into outcome_probe values ('swallowed')`);
      await tx.execute(sql`select 1 / 0`).catch(() => undefined);
      return "answered as saved";
    });
    await expect(attempt).rejects.toThrow();
    expect(await notes()).not.toContain("swallowed");
  });

  test("a failure rolled back to its savepoint (a nested withTransaction) leaves the rest to commit", async () => {
    const result = await withTransaction(database.handle.db, async (tx) => {
      await tx.execute(sql`insert into outcome_probe values ('kept')`);
      await withTransaction(tx, async (inner) => {
        await inner.execute(sql`insert into outcome_probe values ('undone')`);
        await inner.execute(sql`select 1 / 0`);
      }).catch(() => undefined);
      return "saved";
    });
    expect(result).toBe("saved");
    expect(await notes()).toEqual(["kept"]);
  });
});
