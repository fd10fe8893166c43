import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { owningFolder, tablesWritten, tableWriters, writersTable } from "../../scripts/table-writers.ts";

const root = join(import.meta.dir, "..", "..");
const writers = tableWriters(root);
const writersOf = (table: string) => writers.get(table) ?? [];

/** The conversion of the history into partitions (`vend partition`) rewrites whole tables: it writes them all, by design. */
const isPartitionConversion = (file: string) => /^src\/db\/partitions[^/]*\.ts$/.test(file);

const fixtures = join(import.meta.dir, "..", "fixtures", "table-writers");
const writtenIn = (fixture: string) => {
  const path = join(fixtures, fixture);
  return [...tablesWritten(readFileSync(path, "utf8"), path)].sort();
};

describe("the scanner", () => {
  test("finds writes in SQL text and in Drizzle calls, not in comments", () => {
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

  test.each([
    ["sql-aliases.ts", ["api_keys", "provider_breakers", "sandbox_orders", "wallets", "webhook_attempts", "webhook_deliveries"]],
    ["truncate-merge-copy.ts", ["products", "provider_float_samples", "rate_limit_windows", "settings"]],
    ["drizzle-alias.ts", ["transactions", "webhook_deliveries", "webhook_endpoints"]],
    ["sql-raw-constant.ts", ["events", "webhook_attempts"]],
    ["sql-identifier.ts", ["api_keys", "operators", "price_plan_discounts", "price_plans", "provider_callbacks"]],
    ["table-list.ts", ["audit_entries", "idempotency_records", "operators", "products", "settings", "vend_batches"]],
    ["table-list-names.ts", []],
    ["reads-only.ts", []],
  ])("finds exactly the tables %s writes", (fixture, tables) => {
    expect(writtenIn(fixture)).toEqual(tables);
  });
});

describe("which file writes which table", () => {
  test("only src/orders/statements/ writes transactions, provider_attempts and the work queue", () => {
    for (const table of ["transactions", "provider_attempts", "transaction_queue"]) {
      expect(writersOf(table).length).toBeGreaterThan(0);
      const others = writersOf(table).filter(
        (file) => !file.startsWith("src/orders/statements/") && !isPartitionConversion(file),
      );
      expect(others).toEqual([]);
    }
  });

  test("only src/webhooks/statements/ writes events, webhook deliveries and their attempts", () => {
    for (const table of ["events", "webhook_deliveries", "webhook_attempts"]) {
      expect(writersOf(table).length).toBeGreaterThan(0);
      const others = writersOf(table).filter(
        (file) => !file.startsWith("src/webhooks/statements/") && !isPartitionConversion(file),
      );
      expect(others).toEqual([]);
    }
  });

  test("only src/ledger/ writes ledger entries", () => {
    expect(writersOf("ledger_entries").filter((file) => !isPartitionConversion(file))).toEqual(["src/ledger/movements.ts"]);
  });

  test("the scanner sees the partition conversion write the partitioned tables", () => {
    const converted = [...writers].filter(([, files]) => files.some(isPartitionConversion)).map(([table]) => table);
    expect(converted).toEqual(["events", "ledger_entries", "transactions"]);
  });

  test("ARCHITECTURE.md's table of writers is the tree's (regenerate it with `bun scripts/table-writers.ts`)", () => {
    const architecture = readFileSync(join(root, "ARCHITECTURE.md"), "utf8");
    const kept = architecture.split("<!-- table-writers -->")[1]?.trim();
    expect(kept).toBe(writersTable(writers));
  });
});

/**
 * The tables more than one folder of src/ writes today, each with why. Every other table has one owning folder,
 * and another folder asks the owner. An entry goes when its table gets its one owner; none is added.
 */
const sharedTables: Record<string, { folders: string[]; reason: string }> = {};

describe("one owner per table", () => {
  const owners = new Map(
    [...writers].map(([table, files]) => [
      table,
      [...new Set(files.filter((file) => !isPartitionConversion(file)).map(owningFolder))].sort(),
    ]),
  );

  test("each table has one owning folder but the listed shared ones, and each listed one is still shared", () => {
    const report = [...owners].map(([table, folders]) => `${table}: ${folders.join(", ")}`).join("\n");
    const shared = [...owners].filter(([, folders]) => folders.length > 1);
    console.info(`${report}\n${shared.length} of ${owners.size} tables are written by more than one folder`);
    expect(Object.fromEntries(shared)).toEqual(
      Object.fromEntries(Object.entries(sharedTables).map(([table, { folders }]) => [table, folders])),
    );
    for (const { reason } of Object.values(sharedTables)) expect(reason.length).toBeGreaterThan(0);
  });

  test("a file's owning folder is its folder under src/", () => {
    expect(owningFolder("src/orders/statements/accept.ts")).toBe("src/orders");
    expect(owningFolder("src/providers/sandbox/provider.ts")).toBe("src/providers");
    expect(owningFolder("src/app.ts")).toBe("src");
  });
});
