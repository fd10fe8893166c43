import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tablesWritten, tableWriters, writersTable } from "../../scripts/table-writers.ts";

const root = join(import.meta.dir, "..", "..");
const writers = tableWriters(root);
const writersOf = (table: string) => writers.get(table) ?? [];

describe("which file writes which table", () => {
  test("the scanner finds writes in SQL text and in Drizzle calls, not in comments", () => {
    const text = [
      "// update wallets set nothing",
      "/** insert into events (a comment) */",
      "const a = sql`update transactions set status = 'pending'`;",
      "const b = sql`with x as (delete from provider_attempts where id = 1) select 1 -- insert into accounts`;",
      "await db.insert(ledgerEntries).values({});",
      "await db.select().from(products).for('update');",
    ].join("\n");
    expect([...tablesWritten(text)].sort()).toEqual(["ledger_entries", "provider_attempts", "transactions"]);
  });

  test("only src/orders/statements/ writes transactions, provider_attempts and the work queue", () => {
    for (const table of ["transactions", "provider_attempts", "transaction_queue"]) {
      expect(writersOf(table).length).toBeGreaterThan(0);
      expect(writersOf(table).filter((file) => !file.startsWith("src/orders/statements/"))).toEqual([]);
    }
  });

  test("only src/ledger/ writes ledger entries", () => {
    expect(writersOf("ledger_entries")).toEqual(["src/ledger/movements.ts"]);
  });

  test("ARCHITECTURE.md's table of writers is the tree's (regenerate it with `bun scripts/table-writers.ts`)", () => {
    const architecture = readFileSync(join(root, "ARCHITECTURE.md"), "utf8");
    const kept = architecture.split("<!-- table-writers -->")[1]?.trim();
    expect(kept).toBe(writersTable(writers));
  });
});
