import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { sql } from "drizzle-orm";
import type { BulkSummary } from "../../cli/bulk/summary.ts";
import type { components } from "../../generated/openapi-types.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import { fastProcessing } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { cliEnv, removeConfigDirs, runCli, runCommand } from "./cli.ts";
import { onTerminal, script } from "./terminal.ts";

type Schemas = components["schemas"];
type Env = Record<string, string | undefined>;

let server: TestServer;
let dir: string;

beforeAll(async () => {
  server = await startTestServer(fastProcessing(), { background: true });
  dir = mkdtempSync(join(tmpdir(), "vend-bulk-"));
});
afterAll(async () => {
  removeConfigDirs();
  rmSync(dir, { recursive: true, force: true });
  await server.close();
});

async function account(name: string, kobo: number) {
  const created = await fundedAccount(server, kobo, name);
  const env: Env = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: created.testKey });
  return { ...created, env };
}

function writeOrders(name: string, lines: string[]): string {
  const path = join(dir, name);
  writeFileSync(path, `${lines.join("\r\n")}\r\n`);
  return path;
}

type ResultRecord = Record<string, string>;
const readResults = (path: string): ResultRecord[] => parse(readFileSync(path), { columns: true }) as ResultRecord[];

async function runBulk(args: string[], env: Env): Promise<{ summary: BulkSummary; stderr: string }> {
  const result = await runCli(["vend", "bulk", ...args, "--json"], env);
  if (result.code !== 0) throw new Error(`vend bulk exited ${result.code}: ${result.stderr}`);
  return { summary: JSON.parse(result.stdout) as BulkSummary, stderr: result.stderr };
}

/** The books: every wallet equals its ledger. */
async function expectBalancedBooks(): Promise<void> {
  const report = (await server.admin.get("/admin/v1/reconciliation")).json.data as Schemas["Reconciliation"];
  expect(report.discrepancies).toEqual([]);
  expect(report.balanced).toBe(true);
}

async function walletOf(key: string): Promise<Schemas["Wallet"]> {
  return (await server.client(key).get("/api/v1/wallet")).json.data as Schemas["Wallet"];
}

/** Rows of a raw query: postgres.js answers an array, PGlite an object with `rows`. */
const rowsOf = <T>(result: unknown): T[] => (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
const query = async <T>(statement: ReturnType<typeof sql>): Promise<T[]> =>
  rowsOf<T>(await server.database.handle.db.execute(statement));

/** Per transaction of the account: how many there are per client_reference, ledger entries and provider sends. */
async function moneyTrail(accountId: string) {
  return query<{ client_reference: string; transactions: number; ledger_entries: number; provider_sends: number }>(sql`
    select t.client_reference,
           count(*)::int as transactions,
           sum((select count(*) from ledger_entries l where l.transaction_id = t.id))::int as ledger_entries,
           sum(coalesce((select s.vend_count from sandbox_orders s where s.reference = t.reference), 0))::int as provider_sends
    from transactions t
    where t.account_id = ${accountId}::uuid
    group by t.client_reference
    order by t.client_reference`);
}

describe("vendctl vend bulk", () => {
  test("mixed services: every row's outcome in the results CSV, in input order; the wallet pays each order once", async () => {
    const { testKey, id, env } = await account("bulk-mixed", 10_000_000);
    const file = writeOrders("mixed.csv", [
      "service,network,destination,amount,product_code,meter_type,phone_number,client_reference,metadata.invoice",
      "airtime,mtn,08031234567,100,,,,mix-1,INV-1",
      "airtime,airtel,08021111111,50.50,,,,mix-2,INV-2",
      "data,,08031234568,,mtn-data-1gb-1d,,,mix-3,",
      'electricity,ikedc,45031234567,"5000",,prepaid,08031234569,mix-4,INV-4',
      "cable,dstv,7031234567,,dstv-compact,,,mix-5,",
    ]);
    const { summary } = await runBulk([file], env);
    expect(summary).toMatchObject({
      file,
      results: `${file}.results.csv`,
      orders: 5,
      complete: true,
      counts: { successful: 4, failed: 1, queued: 0, pending: 0, processing: 0, refused: 0, invalid: 0, not_sent: 0 },
    });
    expect(summary.batches).toHaveLength(1);
    expect(summary.batches[0]).toMatchObject({ first_line: 2, last_line: 6, order_count: 5, replayed: false });
    expect(summary.batches[0]?.idempotency_key).toBe(`vendctl-bulk-${summary.file_sha256}-2-6`);

    const rows = readResults(summary.results);
    expect(Object.keys(rows[0] ?? {})).toEqual([
      "line",
      "client_reference",
      "batch_id",
      "status",
      "reference",
      "amount_kobo",
      "price_kobo",
      "error_code",
      "error_message",
      "token",
      "units",
    ]);
    expect(rows.map((r) => [r.line, r.client_reference, r.status])).toEqual([
      ["2", "mix-1", "successful"],
      ["3", "mix-2", "failed"],
      ["4", "mix-3", "successful"],
      ["5", "mix-4", "successful"],
      ["6", "mix-5", "successful"],
    ]);
    expect(rows.every((r) => r.batch_id === summary.batches[0]?.id && /^txn_/.test(r.reference ?? ""))).toBe(true);
    expect(rows[0]?.amount_kobo).toBe("10000");
    expect(rows[1]?.amount_kobo).toBe("5050");
    expect(rows[3]?.token).toMatch(/^[0-9-]+$/);
    expect(rows.filter((r) => r.token !== "")).toHaveLength(1);

    // The API agrees: the batch's transactions carry the row's line and metadata.
    const listed = (await server.client(testKey).get(`/api/v1/transactions?batch_id=${summary.batches[0]?.id}&limit=100`)).json
      .data as Schemas["TransactionPage"];
    expect(listed.items).toHaveLength(5);
    const first = listed.items.find((t) => t.client_reference === "mix-1");
    expect(first?.metadata).toMatchObject({ invoice: "INV-1", vendctl_line: "2" });

    // vendctl lists them too, by batch.
    const batchId = summary.batches[0]?.id ?? "";
    const byBatch = await runCli(["transactions", "list", "--batch-id", batchId, "--all", "--json"], env);
    expect((JSON.parse(byBatch.stdout) as Schemas["Transaction"][]).map((t) => t.client_reference).sort()).toEqual(
      rows.map((r) => r.client_reference ?? ""),
    );

    // Money: one transaction per row, a hold and a capture or release each, one provider send each; the wallet paid
    // exactly the successful orders' prices, and the books balance.
    expect(await moneyTrail(id)).toEqual(
      ["mix-1", "mix-2", "mix-3", "mix-4", "mix-5"].map((ref) => ({
        client_reference: ref,
        transactions: 1,
        ledger_entries: 2,
        provider_sends: 1,
      })),
    );
    const paid = rows.filter((r) => r.status === "successful").reduce((sum, r) => sum + Number(r.price_kobo), 0);
    expect(await walletOf(testKey)).toMatchObject({ balance_kobo: 10_000_000 - paid, held_kobo: 0 });
    await expectBalancedBooks();
  });

  test("a row the wallet cannot cover is refused and one the service rejects is invalid; the rest go through (exit 0)", async () => {
    // NGN 250: two NGN 100 airtime orders fit (price below face value), the third does not.
    const { testKey, env } = await account("bulk-refused", 25_000);
    const file = writeOrders("refused.csv", [
      "service,network,destination,amount,product_code,client_reference",
      "airtime,mtn,08031234567,100,,ref-1",
      "data,,08031234567,,no-such-bundle,ref-2",
      "airtime,mtn,08031234567,100,,ref-3",
      "airtime,mtn,08031234567,100,,ref-4",
    ]);
    const out = join(dir, "refused-results.csv");
    const { summary } = await runBulk([file, "--out", out], env);
    expect(summary.counts).toMatchObject({ successful: 2, refused: 1, invalid: 1 });
    const rows = readResults(out);
    expect(rows.map((r) => [r.line, r.client_reference, r.status, r.error_code])).toEqual([
      ["2", "ref-1", "successful", ""],
      ["3", "ref-2", "invalid", "VALIDATION_FAILED"],
      ["4", "ref-3", "successful", ""],
      ["5", "ref-4", "refused", "WALLET_INSUFFICIENT_FUNDS"],
    ]);
    expect(rows[1]?.error_message).toContain("orders[1]");
    expect(rows[1]?.reference).toBe("");
    expect(rows[3]?.reference).toBe("");
    const all = (await server.client(testKey).get("/api/v1/transactions?limit=100")).json.data as Schemas["TransactionPage"];
    expect(all.items.map((t) => t.client_reference).sort()).toEqual(["ref-1", "ref-3"]);
    const paid = rows.filter((r) => r.status === "successful").reduce((sum, r) => sum + Number(r.price_kobo), 0);
    expect(await walletOf(testKey)).toMatchObject({ balance_kobo: 25_000 - paid, held_kobo: 0 });
    await expectBalancedBooks();
  });

  test("a file with bad rows sends nothing: exit 2, every problem with its line", async () => {
    const { testKey, env } = await account("bulk-bad", 1_000_000);
    const file = writeOrders("bad.csv", [
      "service,network,destination,amount",
      "airtime,mtn,08031234567,100",
      "airtime,mtn,0803,100",
      "airtime,mtn,08031234567,1.234",
      "power,ikedc,45031234567,5000",
    ]);
    const result = await runCli(["vend", "bulk", file], env);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("nothing was sent");
    expect(result.stderr).toContain('line 3: destination "0803" is not a Nigerian phone number');
    expect(result.stderr).toContain('line 4: amount must be an amount in NGN such as 500 or 500.50, got "1.234"');
    expect(result.stderr).toContain('line 5: service "power"');
    const unclosed = writeOrders("unclosed.csv", ["service,network,destination,amount", 'airtime,mtn,"08031234567,100']);
    const syntax = await runCli(["vend", "bulk", unclosed], env);
    expect(syntax.code).toBe(2);
    expect(syntax.stderr).toContain("line 2: a quoted field is never closed");
    const unknownNetwork = writeOrders("network.csv", ["service,network,destination,amount", "airtime,mtm,08031234567,100"]);
    const network = await runCli(["vend", "bulk", unknownNetwork], env);
    expect(network.code).toBe(2);
    expect(network.stderr).toContain('line 2: no airtime product for network "mtm"');
    const missing = await runCli(["vend", "bulk", join(dir, "no-such-file.csv")], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("cannot read");
    const size = await runCli(["vend", "bulk", file, "--batch-size", "1001"], env);
    expect(size.code).toBe(2);
    const good = writeOrders("good.csv", ["service,network,destination,amount", "airtime,mtn,08031234567,100"]);
    const itself = await runCli(["vend", "bulk", good, "--out", good], env);
    expect(itself).toMatchObject({ code: 2, stderr: expect.stringContaining("is the orders file itself") });
    const nowhere = await runCli(["vend", "bulk", good, "--out", join(dir, "no-such-dir", "results.csv")], env);
    expect(nowhere).toMatchObject({ code: 2, stderr: expect.stringContaining("cannot write the results") });
    const listed = (await server.client(testKey).get("/api/v1/transactions")).json.data as Schemas["TransactionPage"];
    expect(listed.items).toEqual([]);
  });

  test("--no-wait stops once every batch is sent; running it again sends nothing new and updates the results", async () => {
    const { testKey, id, env } = await account("bulk-nowait", 1_000_000);
    const file = writeOrders("nowait.csv", [
      "service,network,destination,amount,client_reference",
      ...[1, 2, 3].map((n) => `airtime,mtn,08031234567,100,nw-${n}`),
    ]);
    const first = await runBulk([file, "--no-wait", "--batch-size", "2"], env);
    expect(first.summary.orders).toBe(3);
    expect(first.summary.batches.map((b) => b.replayed)).toEqual([false, false]);
    const again = await runBulk([file, "--batch-size", "2"], env);
    expect(again.summary.batches.map((b) => b.replayed)).toEqual([true, true]);
    expect(again.summary.batches.map((b) => b.id)).toEqual(first.summary.batches.map((b) => b.id));
    expect(again.summary).toMatchObject({ complete: true, counts: { successful: 3 } });
    expect(readResults(again.summary.results).map((r) => r.status)).toEqual(["successful", "successful", "successful"]);
    expect((await moneyTrail(id)).map((t) => [t.client_reference, t.transactions, t.provider_sends])).toEqual([
      ["nw-1", 1, 1],
      ["nw-2", 1, 1],
      ["nw-3", 1, 1],
    ]);
    expect((await walletOf(testKey)).held_kobo).toBe(0);
    await expectBalancedBooks();
  });

  test.skipIf(!script)(
    "on a terminal: progress on stderr while it follows the orders, then the summary table and a hint",
    async () => {
      const { env } = await account("bulk-terminal", 1_000_000);
      // The sandbox keeps a number ending 4444 pending with no callback: the wait ends with it not final.
      const file = writeOrders("terminal.csv", [
        "service,network,destination,amount",
        "airtime,mtn,08031234567,100",
        "airtime,mtn,08031231111,100",
        "airtime,mtn,08031234444,100",
      ]);
      const terminal = onTerminal(["vend", "bulk", file, "--wait", "3"], { ...env, TERM: "xterm", COLUMNS: "200" });
      await terminal.expectPrompt("Sent 3 of 3 orders (1 of 1 batches)");
      await terminal.expectPrompt("2 final: 1 successful, 1 failed");
      expect(await terminal.exited()).toBe(0);
      const screen = terminal.screen();
      expect(screen).toMatch(/SUCCESSFUL\s+1\r?\n/);
      expect(screen).toMatch(/FAILED\s+1\r?\n/);
      expect(screen).toMatch(/NOT FINAL\s+1\r?\n/);
      expect(screen).toMatch(/COMPLETE\s+false\r?\n/);
      expect(screen).toContain("1 order is not final yet after waiting up to 3s. Run the same command again later");
      expect(readResults(`${file}.results.csv`).map((r) => r.status)).toEqual(["successful", "failed", "pending"]);
    },
  );

  test("bash completes vend bulk and its flags", async () => {
    const script = (await runCli(["completion", "bash"], cliEnv())).stdout;
    const complete = async (...words: string[]) => {
      const line = `eval "$SCRIPT"; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _vendctl; printf "%s\\n" "\${COMPREPLY[@]}"`;
      const result = await runCommand(["bash", "-c", line, "bash", ...words], cliEnv({ SCRIPT: script }));
      return result.stdout.split("\n").filter(Boolean);
    };
    expect(await complete("vendctl", "vend", "b")).toEqual(["bulk"]);
    expect(await complete("vendctl", "vend", "bulk", "--bat")).toEqual(["--batch-size"]);
    expect(await complete("vendctl", "vend", "bulk", "--no")).toEqual(expect.arrayContaining(["--no-wait"]));
  });
});
