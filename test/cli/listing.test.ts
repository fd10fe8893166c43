import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import type { components } from "../../generated/openapi-types.ts";
import { insertTransactions } from "../helpers/seed.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { cliEnv, removeConfigDirs, runCli, startCli } from "./cli.ts";

type Transaction = components["schemas"]["Transaction"];

const total = 1200;
let server: TestServer;
let env: Record<string, string | undefined>;
let apiOrder: string[];
let testKey: string;

/** The references in the order the API pages through them. */
async function listThroughApi(key: string): Promise<string[]> {
  const references: string[] = [];
  let cursor: string | undefined;
  do {
    const res = await server.client(key).get("/api/v1/transactions", { query: { limit: 100, cursor } });
    references.push(...res.json.data.items.map((t: Transaction) => t.reference));
    cursor = res.json.data.page.next_cursor ?? undefined;
  } while (cursor);
  return references;
}

beforeAll(async () => {
  server = await startTestServer();
  const account = await server.createAccount("listing");
  await insertTransactions(server.database.handle.db, { accountId: account.id, mode: "test", count: total });
  testKey = account.testKey;
  env = cliEnv({ VENDCTL_BASE_URL: server.url, VENDCTL_API_KEY: testKey });
  apiOrder = await listThroughApi(testKey);
});
afterAll(async () => {
  removeConfigDirs();
  await server.close();
});

/**
 * A proxy in front of the server that holds page n of the listing until the CLI has written the rows of
 * pages 1..n-1 to stdout. A CLI that buffered everything until the end would never get past page 2.
 */
function gatedProxy(pageSize: number, linesSeen: () => number) {
  const gates: { page: number; needed: number; seen: number; opened: boolean }[] = [];
  const proxy = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      if (url.pathname === "/api/v1/transactions") {
        const page = gates.length + 1;
        const needed = (page - 1) * pageSize;
        const gate = { page, needed, seen: linesSeen(), opened: false };
        gates.push(gate);
        const deadline = Date.now() + 3_000;
        while (linesSeen() < needed && Date.now() < deadline) await Bun.sleep(5);
        gate.seen = linesSeen();
        gate.opened = gate.seen >= needed;
      }
      return fetch(`${server.url}${url.pathname}${url.search}`, {
        method: request.method,
        headers: { authorization: request.headers.get("authorization") ?? "" },
      });
    },
  });
  return { url: `http://127.0.0.1:${proxy.port}`, gates, stop: () => proxy.stop(true) };
}

describe("transactions list --all", () => {
  test(`--jsonl over ${total} transactions: exactly ${total} distinct lines in API order, each page written before the next is fetched`, async () => {
    let stdout = "";
    const lines = () => stdout.split("\n").length - 1;
    const proxy = gatedProxy(100, lines);
    try {
      let firstRowsAt = -1;
      const onStdout = (text: string) => {
        stdout += text;
        if (firstRowsAt < 0 && lines() > 0) firstRowsAt = proxy.gates.length;
      };
      const child = startCli(["transactions", "list", "--all", "--jsonl"], { ...env, VENDCTL_BASE_URL: proxy.url }, { onStdout });
      expect((await child.done).code).toBe(0);
      // The first rows were on stdout while at most page 2 had been asked for (and was being held).
      expect(firstRowsAt).toBeGreaterThanOrEqual(1);
      expect(firstRowsAt).toBeLessThanOrEqual(2);
      expect(proxy.gates).toHaveLength(total / 100);
      expect(proxy.gates.filter((g) => !g.opened)).toEqual([]);
    } finally {
      proxy.stop();
    }
    const references = stdout
      .trimEnd()
      .split("\n")
      .map((line) => (JSON.parse(line) as Transaction).reference);
    expect(references).toHaveLength(total);
    expect(new Set(references).size).toBe(total);
    expect(references).toEqual(apiOrder);
  });

  test("--json is one array of the API's transactions, unchanged (amounts in kobo)", async () => {
    const result = await runCli(["transactions", "list", "--all", "--limit", "100", "--json"], env);
    const parsed = JSON.parse(result.stdout) as Transaction[];
    expect(parsed.map((t) => t.reference)).toEqual(apiOrder);
    const first = await server.client(testKey).get(`/api/v1/transactions/${apiOrder[0]}`);
    expect(parsed[0]).toEqual(first.json.data);
  });

  test("--csv parses with a CSV parser: a header and one record per transaction", async () => {
    const result = await runCli(["transactions", "list", "--all", "--csv"], env);
    expect(result.code).toBe(0);
    const records = parse(result.stdout, { columns: true }) as Record<string, string>[];
    expect(records).toHaveLength(total);
    expect(records.map((r) => r.reference)).toEqual(apiOrder);
    expect(Object.keys(records[0] ?? {})).toContain("amount_kobo");
    expect(records.every((r) => /^\d+$/.test(r.amount_kobo ?? ""))).toBe(true);
  });
});

describe("transactions list paging and filters", () => {
  test("--max N stops after N rows, following cursors; without --all one page and a hint", async () => {
    const max = await runCli(["transactions", "list", "--max", "250", "--jsonl"], env);
    expect(max.stdout.trimEnd().split("\n")).toHaveLength(250);
    expect(
      max.stdout
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l).reference),
    ).toEqual(apiOrder.slice(0, 250));
    const page = await runCli(["transactions", "list", "--limit", "30", "--jsonl"], env);
    expect(page.stdout.trimEnd().split("\n")).toHaveLength(30);
    const cursor = page.stderr.match(/--cursor (\S+)/)?.[1] ?? "";
    expect(cursor).not.toBe("");
    const next = await runCli(["transactions", "list", "--limit", "30", "--cursor", cursor, "--jsonl"], env);
    expect(
      next.stdout
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l).reference),
    ).toEqual(apiOrder.slice(30, 60));
  });

  test("the hint when more rows remain says how to read further, never --all when --all was given", async () => {
    const both = await runCli(["transactions", "list", "--all", "--max", "4", "--jsonl"], env);
    expect(both.stdout.trimEnd().split("\n")).toHaveLength(4);
    expect(both.stderr).toMatch(/^More rows: add --cursor \S+ \(or raise --max above 4, or leave --max out\)\n$/);
    expect(both.stderr).not.toContain("use --all");
    const max = await runCli(["transactions", "list", "--max", "4", "--jsonl"], env);
    expect(max.stderr).toMatch(/^More rows: add --cursor \S+ \(or raise --max above 4, or use --all instead of --max\)\n$/);
    const page = await runCli(["transactions", "list", "--limit", "4", "--jsonl"], env);
    expect(page.stderr).toMatch(/^More rows: add --cursor \S+ \(or use --all\)\n$/);
    const everything = await runCli(["transactions", "list", "--all", "--max", String(total), "--jsonl"], env);
    expect(everything.stderr).toBe("");
  });

  test("every API filter is passed through", async () => {
    const filtered = await runCli(
      ["transactions", "list", "--all", "--status", "successful", "--service", "data", "--network", "mtn", "--jsonl"],
      env,
    );
    const rows = filtered.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Transaction);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((t) => t.status === "successful" && t.service === "data" && t.network === "mtn")).toBe(true);
    const one = rows[0]?.reference ?? "";
    const searched = await runCli(["transactions", "list", "--search", one, "--json"], env);
    if (searched.code !== 0) throw new Error(searched.stderr);
    expect((JSON.parse(searched.stdout) as Transaction[]).map((t) => t.reference)).toEqual([one]);
    const window = await runCli(
      [
        "transactions",
        "list",
        "--from",
        "2000-01-01T00:00:00Z",
        "--to",
        "2000-01-02T00:00:00Z",
        "--destination",
        "08031234567",
        "--json",
      ],
      env,
    );
    if (window.code !== 0) throw new Error(window.stderr);
    expect(JSON.parse(window.stdout)).toEqual([]);
    const bad = await runCli(["transactions", "list", "--from", "yesterday"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("RFC 3339");
  });

  test("the table shows NGN with two decimals and keeps its columns across pages", async () => {
    const result = await runCli(["transactions", "list", "--max", "120", "--limit", "50", "--table"], env);
    const [header, ...rows] = result.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^REFERENCE\s+STATUS\s+SERVICE\s+NETWORK\s+PRODUCT\s+DESTINATION\s+AMOUNT\s+PRICE\s+CREATED$/);
    expect(rows).toHaveLength(120);
    const statusColumn = header?.indexOf("STATUS") ?? -1;
    expect(rows.every((row) => row.startsWith("txn_") && row.slice(statusColumn - 2, statusColumn) === "  ")).toBe(true);
    expect(rows.every((row) => /NGN [\d,]+\.\d{2} +NGN [\d,]+\.\d{2}/.test(row))).toBe(true);
  });
});
