// Runs once, in the embedded run: it never uses the suite's database (see test/helpers/runs-once.ts).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { count, eq } from "drizzle-orm";
import type { BulkSummary } from "../../cli/bulk/summary.ts";
import { transactions, vendBatches } from "../../src/db/schema/index.ts";
import { cliServer, runCli } from "./cli.ts";

const cli = cliServer({ account: { name: "bulk-catalogue", kobo: 100_000_000 } });
const db = () => cli.server.database.handle.db;
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "vend-bulk-catalogue-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What the account has on the server: batches and transactions (a refused file must leave both as they were). */
async function created(): Promise<{ batches: number; transactions: number }> {
  const accountId = cli.account.id;
  const [batches] = await db().select({ n: count() }).from(vendBatches).where(eq(vendBatches.accountId, accountId));
  const [orders] = await db().select({ n: count() }).from(transactions).where(eq(transactions.accountId, accountId));
  return { batches: batches?.n ?? -1, transactions: orders?.n ?? -1 };
}

/** An orders file: the header on line 1, then five good airtime rows (lines 2 to 6), then `row` on line 7. */
function fileWith(name: string, row: string): string {
  const good = [2, 3, 4, 5, 6].map((line) => `airtime,mtn,,08031234567,100,ref-${name}-${line}`);
  const path = join(dir, `${name}.csv`);
  const lines = ["service,network,product_code,destination,amount,client_reference", ...good, `${row},ref-${name}-7`];
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

describe("vend bulk checks every row against the catalogue before sending anything", () => {
  test.each([
    [
      "airtime above the product's maximum",
      "airtime,mtn,,08031234567,100000",
      "line 7: amount 100000 is out of range: MTN Airtime takes NGN 50.00 to NGN 50000.00",
    ],
    [
      "airtime below the product's minimum",
      "airtime,mtn,,08031234567,20",
      "line 7: amount 20 is out of range: MTN Airtime takes NGN 50.00 to NGN 50000.00",
    ],
    [
      "electricity below the disco's minimum",
      "electricity,ikedc,,45031234567,500",
      "line 7: amount 500 is out of range: Ikeja Electric Prepaid takes NGN 1000.00 to NGN 500000.00",
    ],
    [
      "a data bundle with an amount that is not its price",
      "data,mtn,mtn-data-1gb-1d,08031234567,400",
      "line 7: MTN 1GB (1 day) costs NGN 500.00; leave the amount empty (or write 500)",
    ],
    [
      "a disco with nothing on sale",
      "electricity,nodisco,,45031234567,5000",
      'line 7: no electricity products for disco "nodisco"; see vendctl catalogue networks',
    ],
  ])("%s: exit 2 naming line 7 in NGN; no batch and no transaction created", async (name, row, message) => {
    const before = await created();
    const result = await runCli(["vend", "bulk", fileWith(name.replaceAll(" ", "-"), row), "--no-wait"], cli.apiEnv());
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("nothing was sent");
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toMatch(/line [2-6]:/);
    expect(await created()).toEqual(before);
  });

  test("a file whose every row fits goes through", async () => {
    const before = await created();
    const path = fileWith("good", "data,mtn,mtn-data-1gb-1d,08031234567,500");
    const result = await runCli(["vend", "bulk", path, "--no-wait", "--json"], cli.apiEnv());
    expect(result.stderr).not.toContain("nothing was sent");
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout) as BulkSummary;
    expect(summary.counts.invalid).toBe(0);
    expect(await created()).toEqual({ batches: before.batches + 1, transactions: before.transactions + 6 });
  });
});
