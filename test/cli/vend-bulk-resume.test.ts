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
import { cliCommand, cliEnv, removeConfigDirs, runCli } from "./cli.ts";

type Schemas = components["schemas"];

let server: TestServer;
let dir: string;

beforeAll(async () => {
  server = await startTestServer(fastProcessing(), { background: true });
  dir = mkdtempSync(join(tmpdir(), "vend-bulk-resume-"));
});
afterAll(async () => {
  removeConfigDirs();
  rmSync(dir, { recursive: true, force: true });
  await server.close();
});

/** Rows of a raw query: postgres.js answers an array, PGlite an object with `rows`. */
const rowsOf = <T>(result: unknown): T[] => (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
const count = async (statement: ReturnType<typeof sql>): Promise<number> => {
  const rows = rowsOf<{ n: number }>(await server.database.handle.db.execute(statement));
  return Number(rows[0]?.n ?? 0);
};

const rowCount = 300;
const funded = 100_000_000;

describe("vend bulk after a kill", () => {
  test("SIGKILL after the first batch is accepted, then the same command again: every order vended exactly once", async () => {
    const account = await fundedAccount(server, funded, "bulk-resume");
    const env = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: account.testKey });
    const file = join(dir, "orders.csv");
    const rows = Array.from(
      { length: rowCount },
      (_, i) => `airtime,mtn,08031234567,100,order-${String(i + 1).padStart(3, "0")}`,
    );
    writeFileSync(file, `service,network,destination,amount,client_reference\n${rows.join("\n")}\n`);
    const transactionsOfAccount = () =>
      count(sql`select count(*)::int as n from transactions where account_id = ${account.id}::uuid`);

    // First run: killed without warning as soon as its first batch is in the database.
    const first = Bun.spawn(cliCommand(["vend", "bulk", file, "--batch-size", "50", "--json"]), {
      env: env as Record<string, string>,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    let seen = 0;
    for (let i = 0; i < 6000 && seen === 0 && first.exitCode === null; i++) {
      seen = await transactionsOfAccount();
      if (seen === 0) await Bun.sleep(10);
    }
    first.kill("SIGKILL");
    await first.exited;
    expect(first.signalCode).toBe("SIGKILL");
    expect(seen).toBeGreaterThan(0);
    const afterKill = await transactionsOfAccount();
    // The kill leaves at most the batches it had sent; the run never got to write its results.
    expect(afterKill).toBeLessThanOrEqual(rowCount);
    expect(() => readFileSync(`${file}.results.csv`)).toThrow();

    // Second run: the same command, to the end.
    const second = await runCli(["vend", "bulk", file, "--batch-size", "50", "--json"], env);
    expect(second.stderr).toBe("");
    expect(second.code).toBe(0);
    const summary = JSON.parse(second.stdout) as BulkSummary;
    expect(summary).toMatchObject({ orders: rowCount, complete: true, counts: { successful: rowCount, not_sent: 0 } });
    expect(summary.batches).toHaveLength(6);
    // The batches the first run got accepted are replayed, not sent again.
    const replayed = summary.batches.filter((b) => b.replayed).length;
    expect(replayed).toBeGreaterThanOrEqual(1);
    expect(replayed * 50).toBeGreaterThanOrEqual(afterKill);
    expect(new Set(summary.batches.map((b) => b.id)).size).toBe(6);
    expect(await count(sql`select count(*)::int as n from vend_batches where account_id = ${account.id}::uuid`)).toBe(6);

    // Nothing twice: one transaction per client_reference, each with one hold and one capture, sent once to the
    // provider; the wallet paid exactly 300 orders; the books balance.
    expect(await transactionsOfAccount()).toBe(rowCount);
    const perReference = rowsOf(
      await server.database.handle.db.execute(sql`
      select client_reference, count(*)::int as n from transactions where account_id = ${account.id}::uuid
      group by client_reference having count(*) <> 1`),
    );
    expect(perReference).toEqual([]);
    expect(
      await count(
        sql`select count(distinct client_reference)::int as n from transactions where account_id = ${account.id}::uuid`,
      ),
    ).toBe(rowCount);
    expect(
      await count(sql`select count(*)::int as n from ledger_entries l join transactions t on t.id = l.transaction_id
                      where t.account_id = ${account.id}::uuid`),
    ).toBe(rowCount * 2);
    expect(
      await count(sql`select coalesce(sum(s.vend_count), 0)::int as n from sandbox_orders s join transactions t on t.reference = s.reference
                      where t.account_id = ${account.id}::uuid`),
    ).toBe(rowCount);
    const results = parse(readFileSync(summary.results), { columns: true }) as Record<string, string>[];
    expect(results.map((r) => r.client_reference)).toEqual(rows.map((r) => r.split(",")[4]));
    expect(new Set(results.map((r) => r.reference)).size).toBe(rowCount);
    const paid = results.reduce((sum, r) => sum + Number(r.price_kobo), 0);
    const wallet = (await account.client.get("/api/v1/wallet")).json.data as Schemas["Wallet"];
    expect(wallet).toMatchObject({ balance_kobo: funded - paid, held_kobo: 0 });
    const report = (await server.admin.get("/admin/v1/reconciliation")).json.data as Schemas["Reconciliation"];
    expect(report).toMatchObject({ balanced: true, discrepancies: [] });
  }, 180_000);
});
