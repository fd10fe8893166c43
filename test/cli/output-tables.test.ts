import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import type { components } from "../../generated/openapi-types.ts";
import { insertTransactions, type NewTransactionRow } from "../helpers/seed.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { cliEnv, removeConfigDirs, runCli } from "./cli.ts";

type Transaction = components["schemas"]["Transaction"];

const newest = new Date("2026-11-22T13:03:05.000Z");
const token = "1234-5678-9012-3456-7890";
let server: TestServer;
let env: Record<string, string | undefined>;
let listed: Transaction[];

/** Six rows, two per page with --limit 2: small amounts first, then electricity with a token, then large ones. */
const amounts = [5_000, 5_000, 1_900_000, 1_900_000, 123_456_789, 123_456_789];

beforeAll(async () => {
  server = await startTestServer();
  const account = await server.createAccount("output-tables");
  await insertTransactions(server.database.handle.db, {
    accountId: account.id,
    mode: "test",
    count: amounts.length,
    newest,
    generate: (i): Partial<NewTransactionRow> => {
      const amountKobo = amounts[i] ?? 0;
      const common = { amountKobo, priceKobo: amountKobo, status: "successful" as const, clientReference: `order-${i}` };
      if (i === 2 || i === 3) {
        return {
          ...common,
          service: "electricity",
          network: "ikedc",
          productCode: "ikedc-prepaid",
          destination: "45031234567",
          metadata: { token, units: "12.5 kWh", receipt_number: "SBX-RCPT-1", route: "sandbox" },
        };
      }
      return {
        ...common,
        service: "airtime",
        network: "mtn",
        productCode: "mtn-airtime",
        destination: "08031234567",
        metadata: { data_type: "airtime", route: "sandbox", customer_id: `c_${i}` },
      };
    },
  });
  env = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: account.testKey, TZ: "Africa/Lagos" });
  listed = (await server.client(account.testKey).get("/api/v1/transactions", { query: { limit: 100 } })).json.data.items;
});
afterAll(async () => {
  removeConfigDirs();
  await server.close();
});

const lines = (text: string) => text.trimEnd().split("\n");

describe("tables", () => {
  test("--all over several pages of different widths: every row lines up under the header", async () => {
    const result = await runCli(["transactions", "list", "--all", "--limit", "2", "--table"], env);
    expect(result.code).toBe(0);
    const [header = "", ...rows] = lines(result.stdout);
    expect(rows).toHaveLength(amounts.length);
    const createdAt = header.indexOf("CREATED");
    const amountEnd = header.indexOf("AMOUNT") + "AMOUNT".length;
    expect(createdAt).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.slice(createdAt - 2)).toMatch(/^ {2}2026-11-22[ T]/);
      expect(row.slice(0, amountEnd + 1)).toMatch(/NGN [\d,]+\.\d\d $/);
    }
    // Money is right-aligned: every amount ends in the same column, under the end of its header.
    const ends = rows.map((row) => row.indexOf(".", row.indexOf("NGN")) + 3);
    expect(new Set(ends).size).toBe(1);
  });

  test("amounts with thousands separators, times in local time (TZ) or UTC with --utc; JSON keeps the API's values", async () => {
    const local = await runCli(["transactions", "list", "--table"], env);
    expect(local.stdout).toContain("NGN 19,000.00");
    expect(local.stdout).toContain("NGN 1,234,567.89");
    expect(local.stdout).toContain("NGN 50.00");
    expect(local.stdout).toContain("2026-11-22 14:03:05");
    expect(local.stdout).not.toContain("2026-11-22T");
    const utc = await runCli(["transactions", "list", "--table", "--utc"], env);
    expect(utc.stdout).toContain("CREATED (UTC)");
    expect(utc.stdout).toContain("2026-11-22 13:03:05");
    const json = JSON.parse((await runCli(["transactions", "list", "--json"], env)).stdout) as Transaction[];
    expect(json).toEqual(listed);
    expect(json[0]?.created_at).toBe("2026-11-22T13:03:05.000Z");
  });

  test("electricity rows show TOKEN and UNITS columns; other metadata is summarised; no token columns without electricity", async () => {
    const all = await runCli(["transactions", "list", "--table"], env);
    const [header = "", ...rows] = lines(all.stdout);
    expect(header).toMatch(/TOKEN\s+UNITS\s+META/);
    const electricity = rows.filter((row) => row.includes("ikedc"));
    expect(electricity).toHaveLength(2);
    for (const row of electricity) expect(row).toMatch(new RegExp(`${token}\\s+12\\.5 kWh`));
    expect(rows.filter((row) => row.includes("customer_id=c_"))).toHaveLength(4);
    expect(all.stdout).not.toContain("data_type");
    const airtime = await runCli(["transactions", "list", "--service", "airtime", "--table"], env);
    expect(airtime.stdout).not.toContain("TOKEN");
    const one = await runCli(["transactions", "get", listed[2]?.reference ?? "", "--table"], env);
    expect(one.stdout).toMatch(new RegExp(`TOKEN\\s+${token}`));
    expect(one.stdout).toMatch(/UNITS\s+12\.5 kWh/);
  });
});

describe("--csv", () => {
  const apiFields = ["id", "client_reference", "mode", "metadata", "completed_at", "reference", "amount_kobo", "created_at"];

  test("transactions list: every field of the API, metadata as JSON (the token kept), amounts in kobo", async () => {
    const result = await runCli(["transactions", "list", "--all", "--limit", "2", "--csv"], env);
    expect(result.code).toBe(0);
    const records = parse(result.stdout, { columns: true }) as Record<string, string>[];
    expect(records).toHaveLength(amounts.length);
    expect(Object.keys(records[0] ?? {})).toEqual(expect.arrayContaining(apiFields));
    for (const [i, record] of records.entries()) {
      const api = listed[i];
      expect(record.id).toBe(api?.id ?? "");
      expect(record.client_reference).toBe(api?.client_reference ?? "");
      expect(record.mode).toBe("test");
      expect(record.completed_at).toBe(api?.completed_at ?? "");
      expect(JSON.parse(record.metadata ?? "")).toEqual(api?.metadata ?? {});
      expect(record.amount_kobo).toBe(String(api?.amount_kobo));
    }
    expect(JSON.parse(records[2]?.metadata ?? "{}").token).toBe(token);
  });

  test("transactions get: the same fields", async () => {
    const result = await runCli(["transactions", "get", listed[2]?.reference ?? "", "--csv"], env);
    const [record] = parse(result.stdout, { columns: true }) as Record<string, string>[];
    expect(Object.keys(record ?? {})).toEqual(expect.arrayContaining(apiFields));
    expect(record?.id).toBe(listed[2]?.id ?? "");
    expect(JSON.parse(record?.metadata ?? "{}").token).toBe(token);
  });
});
