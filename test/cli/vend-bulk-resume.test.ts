import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

type Env = Record<string, string | undefined>;

async function newAccount(name: string) {
  const account = await fundedAccount(server, funded, name);
  const env: Env = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: account.testKey });
  const file = join(dir, `${name}.csv`);
  const rows = Array.from(
    { length: rowCount },
    (_, i) => `airtime,mtn,08031234567,100,${name}-${String(i + 1).padStart(3, "0")}`,
  );
  writeFileSync(file, `service,network,destination,amount,client_reference\n${rows.join("\n")}\n`);
  const transactions = () => count(sql`select count(*)::int as n from transactions where account_id = ${account.id}::uuid`);
  return { account, env, file, rows, transactions };
}

const bulk = (file: string, ...more: string[]) => cliCommand(["vend", "bulk", file, "--batch-size", "50", "--json", ...more]);

function spawnBulk(command: string[], env: Env) {
  return Bun.spawn(command, { env: env as Record<string, string>, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
}

/**
 * A gate in front of the server: lets the first batch through, then holds every later batch request without
 * forwarding it, so a run can be killed at a known point: one batch accepted, the next never sent ("fail":
 * answers it 500 instead).
 */
function batchGate(later: "hold" | "fail" = "hold") {
  let accepted = 0;
  let held = 0;
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const gate = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      const isBatch = request.method === "POST" && url.pathname === "/api/v1/vend/batches";
      if (isBatch && accepted >= 1 && later === "fail") {
        return Response.json({ success: false, code: "INTERNAL_ERROR", message: "gate: refused", data: null }, { status: 500 });
      }
      if (isBatch && accepted >= 1) {
        held++;
        await released;
        return new Response("held", { status: 503 });
      }
      const body = request.method === "GET" ? undefined : await request.arrayBuffer();
      const answer = await fetch(`${server.url}${url.pathname}${url.search}`, {
        method: request.method,
        headers: request.headers,
        body,
      });
      if (isBatch && answer.status === 202) accepted++;
      return new Response(await answer.arrayBuffer(), { status: answer.status, headers: answer.headers });
    },
  });
  return {
    url: `http://127.0.0.1:${gate.port}`,
    held: () => held,
    close: async () => {
      release();
      await gate.stop(true);
    },
  };
}

/** Nothing twice: one transaction per row with a hold and a capture, one provider send, the wallet paid once each. */
async function expectEachOrderOnce(run: Awaited<ReturnType<typeof newAccount>>, summary: BulkSummary): Promise<void> {
  const { account } = run;
  expect(await run.transactions()).toBe(rowCount);
  const duplicated = rowsOf(
    await server.database.handle.db.execute(sql`
      select client_reference, count(*)::int as n from transactions where account_id = ${account.id}::uuid
      group by client_reference having count(*) <> 1`),
  );
  expect(duplicated).toEqual([]);
  expect(
    await count(sql`select count(distinct client_reference)::int as n from transactions where account_id = ${account.id}::uuid`),
  ).toBe(rowCount);
  expect(
    await count(sql`select count(*)::int as n from ledger_entries l join transactions t on t.id = l.transaction_id
                    where t.account_id = ${account.id}::uuid`),
  ).toBe(rowCount * 2);
  expect(
    await count(sql`select coalesce(sum(s.vend_count), 0)::int as n from sandbox_orders s join transactions t on t.reference = s.reference
                    where t.account_id = ${account.id}::uuid`),
  ).toBe(rowCount);
  expect(await count(sql`select count(*)::int as n from vend_batches where account_id = ${account.id}::uuid`)).toBe(6);
  const results = parse(readFileSync(summary.results), { columns: true }) as Record<string, string>[];
  expect(results.map((r) => r.client_reference)).toEqual(run.rows.map((r) => r.split(",")[4]));
  expect(results.every((r) => r.status === "successful")).toBe(true);
  expect(new Set(results.map((r) => r.reference)).size).toBe(rowCount);
  const paid = results.reduce((sum, r) => sum + Number(r.price_kobo), 0);
  const wallet = (await account.client.get("/api/v1/wallet")).json.data as Schemas["Wallet"];
  expect(wallet).toMatchObject({ balance_kobo: funded - paid, held_kobo: 0 });
  const report = (await server.admin.get("/admin/v1/reconciliation")).json.data as Schemas["Reconciliation"];
  expect(report).toMatchObject({ balanced: true, discrepancies: [] });
}

describe("vend bulk interrupted, then run again", () => {
  test("killed while its second batch is on the way: the same command replays the first and sends the other five", async () => {
    const run = await newAccount("gated");
    const gate = batchGate();
    try {
      const first = spawnBulk(bulk(run.file), { ...run.env, VENDCTL_BASE_URL: gate.url });
      for (let i = 0; i < 6000 && gate.held() === 0 && first.exitCode === null; i++) await Bun.sleep(10);
      expect(gate.held(), "the first run's second batch did not reach the gate within 60 s").toBe(1);
      first.kill("SIGKILL");
      await first.exited;
      expect(first.signalCode).toBe("SIGKILL");
    } finally {
      await gate.close();
    }
    expect(await run.transactions()).toBe(50);
    expect(existsSync(`${run.file}.results.csv`)).toBe(false);
    const journal = JSON.parse(readFileSync(`${run.file}.vendctl-bulk.json`, "utf8"));
    expect(journal).toMatchObject({ batch_size: 50, batches: [{ first_line: 2, last_line: 51 }] });

    // What would vend again under new keys is refused, and sends nothing.
    const otherSize = await runCli(["vend", "bulk", run.file, "--batch-size", "100"], run.env);
    expect(otherSize.code).toBe(2);
    expect(otherSize.stderr).toContain("was started with --batch-size 50");
    const original = readFileSync(run.file);
    writeFileSync(run.file, `${original}airtime,mtn,08031234567,100,gated-extra\n`);
    const changed = await runCli(["vend", "bulk", run.file, "--batch-size", "50"], run.env);
    expect(changed.code).toBe(2);
    expect(changed.stderr).toContain("changed since a run that did not finish");
    writeFileSync(run.file, original);
    expect(await run.transactions()).toBe(50);

    const second = await runCli(["vend", "bulk", run.file, "--batch-size", "50", "--json"], run.env);
    expect(second.stderr).toBe("");
    expect(second.code).toBe(0);
    const summary = JSON.parse(second.stdout) as BulkSummary;
    expect(summary).toMatchObject({ orders: rowCount, complete: true, counts: { successful: rowCount, not_sent: 0 } });
    expect(summary.batches.map((b) => b.replayed)).toEqual([true, false, false, false, false, false]);
    expect(summary.batches[0]?.id).toBe(journal.batches[0].id);
    expect(existsSync(`${run.file}.vendctl-bulk.json`)).toBe(false);
    await expectEachOrderOnce(run, summary);
  }, 180_000);

  test("SIGKILL as soon as the first orders exist, then the same command again: every order vended exactly once", async () => {
    const run = await newAccount("polled");
    const first = spawnBulk(bulk(run.file), run.env);
    let seen = 0;
    for (let i = 0; i < 6000 && seen === 0 && first.exitCode === null; i++) {
      seen = await run.transactions();
      if (seen === 0) await Bun.sleep(10);
    }
    first.kill("SIGKILL");
    await first.exited;
    expect(first.signalCode).toBe("SIGKILL");
    expect(seen, "the first run created no order within 60 s").toBeGreaterThan(0);
    const afterKill = await run.transactions();
    const second = await runCli(["vend", "bulk", run.file, "--batch-size", "50", "--json"], run.env);
    expect(second.stderr).toBe("");
    expect(second.code).toBe(0);
    const summary = JSON.parse(second.stdout) as BulkSummary;
    expect(summary).toMatchObject({ orders: rowCount, complete: true });
    // Every batch the first run got accepted is replayed, not sent again.
    expect(summary.batches.filter((b) => b.replayed).length * 50).toBeGreaterThanOrEqual(afterKill);
    await expectEachOrderOnce(run, summary);
  }, 180_000);

  test("a batch the API refuses stops the run (exit 1) after writing the results so far; the same command finishes", async () => {
    const run = await newAccount("failed");
    const gate = batchGate("fail");
    let stopped: Awaited<ReturnType<typeof runCli>>;
    try {
      stopped = await runCli(["vend", "bulk", run.file, "--batch-size", "50"], { ...run.env, VENDCTL_BASE_URL: gate.url });
    } finally {
      await gate.close();
    }
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toContain("INTERNAL_ERROR: gate: refused");
    const partial = parse(readFileSync(`${run.file}.results.csv`), { columns: true }) as Record<string, string>[];
    expect(partial).toHaveLength(rowCount);
    expect(
      partial.slice(0, 50).every((r) => r.status === "queued" || r.status === "processing" || r.status === "successful"),
    ).toBe(true);
    expect(partial.slice(50).every((r) => r.status === "not_sent" && r.batch_id === "" && r.reference === "")).toBe(true);
    expect(await run.transactions()).toBe(50);

    const finished = await runCli(["vend", "bulk", run.file, "--batch-size", "50", "--json"], run.env);
    expect(finished.code).toBe(0);
    const summary = JSON.parse(finished.stdout) as BulkSummary;
    expect(summary.batches.map((b) => b.replayed)).toEqual([true, false, false, false, false, false]);
    await expectEachOrderOnce(run, summary);
  }, 180_000);
});
