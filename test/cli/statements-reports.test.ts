import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import type { components } from "../../generated/openapi-types.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import { insertTransactions } from "../helpers/seed.ts";
import { startTestServer, type TestServer, testAdminToken } from "../helpers/server.ts";
import { cliEnv, removeConfigDirs, runCli, runJson } from "./cli.ts";

type Schemas = components["schemas"];

let server: TestServer;
let asKey: Record<string, string | undefined>;
let asAdmin: Record<string, string | undefined>;

beforeAll(async () => {
  server = await startTestServer();
  const buyer = await fundedAccount(server, 500_000, "Statement CLI");
  for (const amount of [12_345, 6_789]) {
    const res = await buyer.client.post("/api/v1/wallet/fund", { amount_kobo: amount, note: `top-up, ${amount}` }, idem());
    expect(res.status).toBe(200);
  }
  asKey = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: buyer.testKey });
  asAdmin = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_ADMIN_TOKEN: testAdminToken });
});
afterAll(async () => {
  removeConfigDirs();
  await server.close();
});

describe("vendctl wallet statement", () => {
  test("--csv --all: a header of API field names, then every entry newest first in kobo, as the API pages them", async () => {
    const api = await server.client(String(asKey.VENDCTL_API_KEY)).get("/api/v1/wallet/ledger");
    const entries = api.json.data.items as Schemas["StatementEntry"][];
    expect(entries.map((entry) => entry.amount_kobo)).toEqual([6_789, 12_345, 500_000]);

    const csv = await runCli(["wallet", "statement", "--all", "--limit", "2", "--csv"], asKey);
    expect(csv.code).toBe(0);
    const [header, ...rows] = parse(csv.stdout) as string[][];
    expect(header).toEqual([
      "id",
      "created_at",
      "kind",
      "reference",
      "amount_kobo",
      "balance_delta_kobo",
      "held_delta_kobo",
      "balance_after_kobo",
      "held_after_kobo",
      "available_after_kobo",
      "note",
    ]);
    expect(rows).toEqual(
      entries.map((entry) => [
        String(entry.id),
        entry.created_at,
        entry.kind,
        "",
        String(entry.amount_kobo),
        String(entry.balance_delta_kobo),
        "0",
        String(entry.balance_after_kobo),
        "0",
        String(entry.available_after_kobo),
        entry.note ?? "",
      ]),
    );
    expect(rows[0]?.[7]).toBe("519134");
    expect(rows[0]?.[10]).toBe("top-up, 6789");
  });

  test("one page without --all, the next cursor on stderr; --from filters; --kind is checked", async () => {
    const page = await runCli(["wallet", "statement", "--limit", "2", "--jsonl"], asKey);
    expect(page.code).toBe(0);
    expect(page.stdout.trim().split("\n").length).toBe(2);
    expect(page.stderr).toMatch(/^More entries: add --cursor \S+ \(or use --all\)\n$/);
    const future = await runJson<unknown[]>(
      ["wallet", "statement", "--from", new Date(Date.now() + 60_000).toISOString()],
      asKey,
    );
    expect(future).toEqual([]);
    const badKind = await runCli(["wallet", "statement", "--kind", "refund"], asKey);
    expect(badKind.code).toBe(2);
    const badFrom = await runCli(["wallet", "statement", "--from", "yesterday"], asKey);
    expect(badFrom.code).toBe(2);
    expect(badFrom.stderr).toContain("2026-11-22");
  });
});

describe("vendctl report settlement", () => {
  test("--csv: one row per service and network plus a total row, the same figures as the API", async () => {
    const account = await server.createAccount("Settled Ltd");
    await insertTransactions(server.database.handle.db, {
      accountId: account.id,
      mode: "live",
      count: 12,
      overrides: { status: "successful", provider: "vtu", completedAt: new Date("2026-11-21T10:00:00Z") },
    });
    const report = await runJson<Schemas["SettlementReport"]>(
      ["report", "settlement", "--provider", "vtu", "--date", "2026-11-21"],
      asAdmin,
    );
    expect(report).toMatchObject({ provider: "vtu", mode: "live", date: "2026-11-21", count: 12 });
    expect(report.by_service.length).toBeGreaterThan(1);

    const csv = await runCli(["report", "settlement", "--provider", "vtu", "--date", "2026-11-21", "--csv"], asAdmin);
    expect(csv.code).toBe(0);
    const [header, ...rows] = parse(csv.stdout) as string[][];
    expect(header).toEqual(["date", "provider", "mode", "service", "network", "count", "amount_kobo", "price_kobo"]);
    const day = ["2026-11-21", "vtu", "live"];
    expect(rows).toEqual([
      ...report.by_service.map((line) => [
        ...day,
        line.service,
        line.network,
        String(line.count),
        String(line.amount_kobo),
        String(line.price_kobo),
      ]),
      [...day, "TOTAL", "", "12", String(report.amount_kobo), String(report.price_kobo)],
    ]);
    const sum = (column: number) => rows.slice(0, -1).reduce((total, row) => total + Number(row[column]), 0);
    expect([sum(5), sum(6), sum(7)]).toEqual([12, report.amount_kobo, report.price_kobo]);

    const empty = await runCli(
      ["report", "settlement", "--provider", "vtu", "--date", "2026-11-21", "--mode", "test", "--csv"],
      asAdmin,
    );
    expect(parse(empty.stdout).slice(1)).toEqual([["2026-11-21", "vtu", "test", "TOTAL", "", "0", "0", "0"]]);
  });

  test("a table names the Lagos day; a missing flag is a usage error, a bad date the API's 400", async () => {
    const table = await runCli(["report", "settlement", "--provider", "vtu", "--date", "2026-11-22", "--table"], asAdmin);
    expect(table.code).toBe(0);
    expect(table.stdout).toStartWith(
      "Settlement vtu (live) for 2026-11-22, Africa/Lagos: 2026-11-21T23:00:00.000Z to 2026-11-22T23:00:00.000Z\n",
    );
    expect(table.stdout).toMatch(/TOTAL\s+-\s+0\s+NGN 0\.00\s+NGN 0\.00\n$/);
    const missing = await runCli(["report", "settlement", "--provider", "vtu"], asAdmin);
    expect(missing.code).toBe(2);
    const bad = await runCli(["report", "settlement", "--provider", "vtu", "--date", "2026-02-30"], asAdmin);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toStartWith("VALIDATION_FAILED: ");
    expect(bad.stderr).toContain("date:");
  });
});
