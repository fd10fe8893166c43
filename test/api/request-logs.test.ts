import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import postgres from "postgres";
import { requestLogs } from "../../src/db/schema/index.ts";
import { lockNameOf } from "../../src/idempotency/protocol.ts";
import { type LogFilters, listLogRows, listLogsQuery } from "../../src/request-logs/statements/list-logs.ts";
import { fundedAccount, idem, newKey } from "../helpers/accounts.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import type { HttpClient, HttpResult } from "../helpers/http.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

type Row = typeof requestLogs.$inferSelect;
type Listed = { id: string; request_id: string; status: number; account_id: string | null; mode: string | null };
type Account = Awaited<ReturnType<typeof fundedAccount>>;

const onPostgres = Boolean(process.env.DATABASE_URL);
let server: TestServer;
let a: Account;
let b: Account;

beforeAll(async () => {
  server = await startTestServer();
  // 150.00 NGN: a 1 GB bundle (500.00) does not fit.
  a = await fundedAccount(server, 15_000, "Logged A");
  b = await fundedAccount(server, 0, "Logged B");
}, 60_000);
afterAll(() => server.close());

/** Every request answered so far is in the table: the recorder writes what it holds now (no waiting on its timer). */
const recorded = () => server.deps.requestLogs.flush();

/** The table with every request answered so far in it, newest first: what every answer below is checked against. */
async function tableRows(where?: ReturnType<typeof and>): Promise<Row[]> {
  await recorded();
  const rows = await server.database.handle.db.select().from(requestLogs).where(where);
  return rows.sort((x, y) => y.id - x.id);
}
const scopeRows = async (account: { id: string }, mode: "test" | "live") =>
  tableRows(and(eq(requestLogs.accountId, account.id), eq(requestLogs.mode, mode)));

/** Every page of a listing, following `next_cursor`; checks the page invariants on the way. */
async function everyPage(client: HttpClient, path: string, query: Record<string, string | number | undefined>, limit: number) {
  const seen: Listed[] = [];
  let cursor: string | undefined;
  do {
    const res = await client.get(path, { query: { ...query, limit, cursor } });
    expect(res.status).toBe(200);
    const { items, page } = res.json.data as { items: Listed[]; page: { next_cursor: string | null; has_more: boolean } };
    expect(items.length).toBeLessThanOrEqual(limit);
    if (page.has_more) expect(items.length).toBe(limit);
    seen.push(...items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return seen;
}

const requestIdOf = (res: HttpResult) => res.headers.get("x-request-id") ?? "";

describe("a client's failed vend is found by its request id", () => {
  const vend = { product_code: "mtn-data-1gb-1d", phone_number: "08031234567" };
  const masked = { ...vend, phone_number: "0803****567" };

  /** The failures a vend can answer, each sent as the client would. */
  async function failures(): Promise<[string, HttpResult, Record<string, unknown>][]> {
    const invalid = { product_code: "mtn-data-1gb-1d" };
    const missingPhone = await a.client.post("/api/v1/vend", invalid, idem());
    const poor = await a.client.post("/api/v1/vend", vend, idem());
    const key = newKey();
    await a.client.post("/api/v1/vend", { ...vend, client_reference: "first" }, idem(key));
    const reused = await a.client.post("/api/v1/vend", { ...vend, client_reference: "second" }, idem(key));
    const sent: [string, HttpResult, Record<string, unknown>][] = [
      ["400 VALIDATION_FAILED", missingPhone, invalid],
      ["402 WALLET_INSUFFICIENT_FUNDS", poor, masked],
      ["422 IDEMPOTENCY_KEY_REUSED", reused, { ...masked, client_reference: "second" }],
    ];
    if (onPostgres) {
      // Another connection holds the key's lock, as a request still running with it would: 409.
      const busyKey = newKey();
      const other = postgres(server.database.url ?? "", { max: 1, onnotice: () => {} });
      try {
        const lock = lockNameOf({ scope: `account:${a.id}:test`, method: "POST", path: "vendProduct", key: busyKey });
        const busy = await other.begin(async (tx) => {
          await tx`select pg_advisory_xact_lock(hashtextextended(${lock}, 0))`;
          return a.client.post("/api/v1/vend", vend, idem(busyKey));
        });
        sent.push(["409 IDEMPOTENCY_IN_PROGRESS", busy, masked]);
      } finally {
        await other.end();
      }
    }
    return sent;
  }

  test("with the body it sent (destination masked) and the envelope it got; another account's key and the other mode get 404, the operator reads it", async () => {
    const sent = await failures();
    expect(sent.map(([, res]) => `${res.status} ${res.json.code}`)).toEqual(sent.map(([name]) => name));
    await recorded();
    const unknown = await a.client.get("/api/v1/request-logs/req_never_sent");
    expect(unknown.status).toBe(404);
    for (const [name, res, body] of sent) {
      const requestId = requestIdOf(res);
      const own = await a.client.get(`/api/v1/request-logs/${requestId}`);
      expect(own.status, name).toBe(200);
      expect(own.json.data).toMatchObject({
        request_id: requestId,
        account_id: a.id,
        mode: "test",
        method: "POST",
        route: "/api/v1/vend",
        path: "/api/v1/vend",
        status: res.status,
        error_code: res.json.code,
        request_body_truncated: false,
        response_body_truncated: false,
      });
      expect(JSON.parse(own.json.data.request_body), name).toEqual(body);
      expect(JSON.parse(own.json.data.response_body), name).toEqual(res.json);
      expect(JSON.stringify(own.json.data)).not.toContain(vend.phone_number);
      // Another account's key, and the same account's live key: the answer to an id that does not exist.
      for (const stranger of [b.client, server.client(a.liveKey)]) {
        const refused = await stranger.get(`/api/v1/request-logs/${requestId}`);
        expect([refused.status, refused.json]).toEqual([404, unknown.json]);
      }
      const operator = await server.admin.get(`/admin/v1/request-logs/${requestId}`);
      expect(operator.status).toBe(200);
      expect(operator.json.data).toEqual(own.json.data);
    }
    // The vend's own record is listed for its key too (without bodies), found by its request id.
    const [, poor] = sent[1] ?? [];
    const listed = await a.client.get("/api/v1/request-logs", { query: { request_id: requestIdOf(poor as HttpResult) } });
    expect(listed.json.data.items).toHaveLength(1);
    expect(listed.json.data.items[0]).not.toHaveProperty("request_body");
  });

  test("a request id sent twice names the latest request; the operator's list has both", async () => {
    const requestId = `reused-${newKey()}`;
    const first = await a.client.get("/api/v1/wallet", { headers: { "x-request-id": requestId } });
    const second = await a.client.get("/api/v1/transactions/txn_none", { headers: { "x-request-id": requestId } });
    expect([first.status, second.status, requestIdOf(second)]).toEqual([200, 404, requestId]);
    await recorded();
    const read = await a.client.get(`/api/v1/request-logs/${requestId}`);
    expect([read.json.data.status, read.json.data.path]).toEqual([404, "/api/v1/transactions/txn_none"]);
    const both = await server.admin.get("/admin/v1/request-logs", { query: { request_id: requestId } });
    expect(both.json.data.items.map((item: Listed) => item.status)).toEqual([404, 200]);
  });
});

describe("GET /api/v1/request-logs", () => {
  let since: Date;

  beforeAll(async () => {
    since = new Date();
    // A's requests, of every kind a filter tells apart; B's and the live key's in between.
    await a.client.get("/api/v1/wallet");
    await a.client.get("/api/v1/transactions", { query: { status: "failed" } });
    await a.client.get("/api/v1/transactions/a_b");
    await a.client.get("/api/v1/transactions/axb");
    await b.client.get("/api/v1/wallet");
    await server.client(a.liveKey).get("/api/v1/wallet");
    await a.client.post("/api/v1/vend", { product_code: "mtn-airtime" }, idem("filter-key"));
    await a.client.post("/api/v1/wallet/fund", { amount_kobo: 100 }, idem());
    for (let n = 0; n < 12; n++) await a.client.get(n % 3 === 0 ? "/api/v1/wallet" : "/api/v1/catalogue/products");
    await recorded();
  }, 60_000);

  test("a key sees its own account's and mode's records only, newest first, every one of them", async () => {
    const expected = await scopeRows(a, "test");
    const listed = await everyPage(a.client, "/api/v1/request-logs", {}, 7);
    expect(listed.map((item) => item.id)).toEqual(expected.map((row) => String(row.id)));
    expect(new Set(listed.map((item) => `${item.account_id}:${item.mode}`))).toEqual(new Set([`${a.id}:test`]));
    const liveRows = await scopeRows(a, "live");
    const live = await everyPage(server.client(a.liveKey), "/api/v1/request-logs", {}, 100);
    expect(live.map((item) => item.id)).toEqual(liveRows.map((row) => String(row.id)));
    expect(live.length).toBeGreaterThan(0);
  });

  const cases: [string, Record<string, string>, (row: Row) => boolean][] = [
    ["an exact status", { status: "404" }, (row) => row.status === 404],
    ["a status class", { status: "4xx" }, (row) => row.status >= 400 && row.status <= 499],
    ["successes", { status: "2xx" }, (row) => row.status >= 200 && row.status <= 299],
    ["a method", { method: "POST" }, (row) => row.method === "POST"],
    ["a route", { route: "/api/v1/transactions/{reference}" }, (row) => row.route === "/api/v1/transactions/{reference}"],
    ["a path prefix", { path: "/api/v1/wallet" }, (row) => row.path.startsWith("/api/v1/wallet")],
    // `_` and `%` are themselves, not patterns: `a_` does not match `axb`, and no path starts with `a%`.
    ["a path prefix with _", { path: "/api/v1/transactions/a_" }, (row) => row.path === "/api/v1/transactions/a_b"],
    ["a path prefix with %", { path: "/api/v1/transactions/a%" }, () => false],
    ["an error code", { error_code: "VALIDATION_FAILED" }, (row) => row.errorCode === "VALIDATION_FAILED"],
    ["an idempotency key", { idempotency_key: "filter-key" }, (row) => row.idempotencyKey === "filter-key"],
    [
      "several at once",
      { method: "GET", status: "2xx", path: "/api/v1/catalogue" },
      (row) => row.method === "GET" && row.status < 300 && row.path.startsWith("/api/v1/catalogue"),
    ],
  ];
  test.each(cases)("filtered by %s, across pages", async (_, query, matches) => {
    const expected = (await scopeRows(a, "test")).filter(matches).map((row) => String(row.id));
    const listed = await everyPage(a.client, "/api/v1/request-logs", query, 3);
    expect(listed.map((item) => item.id)).toEqual(expected);
    if (query.path !== "/api/v1/transactions/a%") expect(expected.length).toBeGreaterThan(0);
  });

  test("filtered by arrival: from and to, both inclusive, across pages", async () => {
    const rows = (await scopeRows(a, "test")).filter((row) => row.createdAt >= since);
    const newest = rows[2]?.createdAt ?? new Date();
    const oldest = rows[rows.length - 3]?.createdAt ?? new Date();
    const expected = rows.filter((row) => row.createdAt >= oldest && row.createdAt <= newest).map((row) => String(row.id));
    const query = { from: oldest.toISOString(), to: newest.toISOString() };
    expect((await everyPage(a.client, "/api/v1/request-logs", query, 4)).map((item) => item.id)).toEqual(expected);
    expect(expected.length).toBeGreaterThanOrEqual(rows.length - 4);
    const before = await everyPage(
      a.client,
      "/api/v1/request-logs",
      { to: new Date(since.getTime() - 60_000).toISOString() },
      100,
    );
    expect(before).toEqual([]);
  });

  test("a cursor works only with the list and the filters it came with", async () => {
    const first = await a.client.get("/api/v1/request-logs", { query: { status: "2xx", limit: 2 } });
    const cursor = first.json.data.page.next_cursor;
    expect(cursor).toBeString();
    const misuses: [HttpClient, Record<string, string | number>][] = [
      [a.client, { status: "4xx", limit: 2, cursor }],
      [a.client, { limit: 2, cursor }],
      [b.client, { status: "2xx", limit: 2, cursor }],
      [server.client(a.liveKey), { status: "2xx", limit: 2, cursor }],
      [a.client, { status: "2xx", limit: 2, cursor: `${cursor}x` }],
      [a.client, { status: "2xx", limit: 2, cursor: "garbage" }],
    ];
    for (const [client, query] of misuses) {
      const res = await client.get("/api/v1/request-logs", { query });
      expect([res.status, res.json.data?.errors?.[0]?.field]).toEqual([400, "cursor"]);
    }
    const admin = await server.admin.get("/admin/v1/request-logs", { query: { status: "2xx", limit: 2, cursor } });
    expect([admin.status, admin.json.data?.errors?.[0]?.field]).toEqual([400, "cursor"]);
    const next = await a.client.get("/api/v1/request-logs", { query: { status: "2xx", limit: 2, cursor } });
    expect(next.status).toBe(200);
  });

  test.each([
    [{ limit: 0 }, "limit"],
    [{ status: "4x" }, "status"],
    [{ status: "6xx" }, "status"],
    [{ path: "api/v1" }, "path"],
    [{ method: "FETCH" }, "method"],
    [{ from: "yesterday" }, "from"],
    [{ from: "2026-01-02T00:00:00Z", to: "2026-01-01T00:00:00Z" }, "from"],
  ] as [Record<string, string | number>, string][])("%j is refused, naming %s", async (query, field) => {
    const res = await a.client.get("/api/v1/request-logs", { query });
    expect(res.status).toBe(400);
    expect(res.json.data.errors.map((error: { field: string }) => error.field)).toContain(field);
  });

  test("a limit above 100 is 100; none is 25", async () => {
    const all = (await scopeRows(a, "test")).length;
    // One after the other: the first one's own record is not written before the second is answered, or not in it.
    const many = await a.client.get("/api/v1/request-logs", { query: { limit: 500 } });
    const some = await a.client.get("/api/v1/request-logs");
    expect(many.json.data.items).toHaveLength(Math.min(all, 100));
    expect(some.json.data.items).toHaveLength(25);
    expect(all).toBeGreaterThan(25);
  });
});

describe("GET /admin/v1/request-logs", () => {
  test("every account's records and those of no account, newest first; each filter of the operator", async () => {
    const refused = await server.client("rg_test_NotAKeyAtAll000000000000000").get("/api/v1/wallet");
    const unmatched = await a.client.get("/api/v1/no-such-thing");
    expect([refused.status, unmatched.status]).toEqual([401, 404]);
    const all = await tableRows();
    // Its own pages are recorded as it pages, after the first page's newest: no page shows them.
    const listed = await everyPage(server.admin, "/admin/v1/request-logs", {}, 100);
    expect(listed.map((item) => item.id)).toEqual(all.map((row) => String(row.id)));
    const keyOfA = (await scopeRows(a, "test"))[0]?.keyId ?? "";
    const cases: [Record<string, string>, (row: Row) => boolean][] = [
      [{ account_id: a.id }, (row) => row.accountId === a.id],
      [{ account_id: a.id.toUpperCase(), mode: "live" }, (row) => row.accountId === a.id && row.mode === "live"],
      [{ key_id: keyOfA }, (row) => row.keyId === keyOfA],
      [{ mode: "test", status: "4xx" }, (row) => row.mode === "test" && row.status >= 400 && row.status < 500],
      [{ operator: "ADMIN_TOKEN", method: "POST" }, (row) => row.operator === "ADMIN_TOKEN" && row.method === "POST"],
      [{ route: "(unmatched)" }, (row) => row.route === "(unmatched)"],
      [{ request_id: requestIdOf(refused) }, (row) => row.requestId === requestIdOf(refused)],
      [{ error_code: "UNAUTHENTICATED" }, (row) => row.errorCode === "UNAUTHENTICATED"],
    ];
    for (const [query, matches] of cases) {
      const expected = all.filter(matches).map((row) => String(row.id));
      expect(expected.length, JSON.stringify(query)).toBeGreaterThan(0);
      const found = await everyPage(server.admin, "/admin/v1/request-logs", { ...query, to: all[0]?.createdAt.toISOString() }, 5);
      expect(
        found.map((item) => item.id),
        JSON.stringify(query),
      ).toEqual(expected);
    }
    const anonymous = await server.admin.get(`/admin/v1/request-logs/${requestIdOf(refused)}`);
    expect(anonymous.json.data).toMatchObject({ account_id: null, mode: null, key_id: null, status: 401 });
    // No key sees a request made without a recognised key.
    expect((await a.client.get(`/api/v1/request-logs/${requestIdOf(refused)}`)).status).toBe(404);
  });

  test("the admin read of an unknown request id is 404; a key cannot use the admin list", async () => {
    const missing = await server.admin.get("/admin/v1/request-logs/req_never_sent");
    expect([missing.status, missing.json.code]).toEqual([404, "NOT_FOUND"]);
    const forbidden = await a.client.get("/admin/v1/request-logs");
    expect(forbidden.status).toBe(401);
  });
});

describe.skipIf(!onPostgres)("reads at 60,000 records (PostgreSQL)", () => {
  type PlanNode = {
    "Relation Name"?: string;
    "Actual Rows": number;
    "Actual Loops": number;
    "Rows Removed by Filter"?: number;
    Plans?: PlanNode[];
  };
  const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];
  const accountId = "7a1c2f4e-5b6d-4e8f-9a0b-1c2d3e4f5a6b";
  const startedAt = Date.now() - 3 * 3_600_000;
  /** Record `n` (1 to 60,000) arrived 125 ms after the one before: two hours of 8 requests a second. */
  const arrivalOf = (n: number) => new Date(startedAt + n * 125);
  let database: TestDatabase;
  let sql: postgres.Sql;

  beforeAll(async () => {
    database = await createTestDatabase({ maxConnections: 1 });
    sql = postgres(database.url ?? "", { max: 1, onnotice: () => {} });
    // In arrival order, as the recorder writes them; every tenth made by one account's test key, every seventh a 404.
    await sql`insert into request_logs (created_at, request_id, account_id, mode, method, route, path, status, duration_ms)
      select ${new Date(startedAt).toISOString()}::timestamptz + n * interval '125 milliseconds', 'bulk-' || n,
             case when n % 10 = 0 then ${accountId}::uuid end, case when n % 10 = 0 then 'test' end,
             'GET', '/api/v1/wallet', '/api/v1/wallet', case when n % 7 = 0 then 404 else 200 end, 1
      from generate_series(1, 60000) n order by n`;
    await sql`analyze request_logs`;
  }, 60_000);
  afterAll(async () => {
    await sql?.end({ timeout: 5 });
    await database?.drop();
  });

  /** The page the statement answers, and the rows of request_logs its plan read to answer it (index probes included). */
  async function read(filters: LogFilters): Promise<{ ids: number[]; rowsRead: number }> {
    const query = new PgDialect().sqlToQuery(listLogsQuery(filters, { limit: 25, order: "newest" }));
    const [row] = await sql.unsafe(`explain (analyze, format json) ${query.sql}`, query.params as never[]);
    const [explained] = (row?.["QUERY PLAN"] ?? []) as { Plan: PlanNode }[];
    const nodes = nodesOf(explained?.Plan as PlanNode).filter((node) => node["Relation Name"] === "request_logs");
    const rowsRead = nodes.reduce(
      (sum, node) => sum + (node["Actual Rows"] + (node["Rows Removed by Filter"] ?? 0)) * node["Actual Loops"],
      0,
    );
    const rows = await listLogRows(database.handle.db, filters, { limit: 25, order: "newest" });
    return { ids: rows.map((r) => r.id), rowsRead };
  }

  /** The newest 25 of records `first` to `last` that `keep` keeps, by their number (their id here). */
  const newest = (first: number, last: number, keep: (n: number) => boolean = () => true) => {
    const ids: number[] = [];
    for (let n = last; n >= first && ids.length < 25; n--) if (keep(n)) ids.push(n);
    return ids;
  };

  test.each([
    ["a minute, an hour ago", { from: arrivalOf(28_800), to: arrivalOf(29_280) }, newest(28_800, 29_280), 3_000],
    ["before an instant two hours ago", { to: arrivalOf(2_000) }, newest(1, 2_000), 3_000],
    ["after an instant a minute ago", { from: arrivalOf(59_600) }, newest(59_600, 60_000), 100],
    [
      "a key's records before an instant",
      { accountId, mode: "test" as const, to: arrivalOf(2_000) },
      newest(1, 2_000, (n) => n % 10 === 0),
      400,
    ],
    [
      "a key's 404s",
      { accountId, mode: "test" as const, status: { min: 404, max: 404 } },
      newest(1, 60_000, (n) => n % 70 === 0),
      400,
    ],
    ["a request id", { requestId: "bulk-30000" }, [30_000], 5],
  ] as [string, LogFilters, number[], number][])("%s", async (_, filters, expected, bound) => {
    const { ids, rowsRead } = await read(filters);
    expect(ids).toEqual(expected);
    expect(rowsRead).toBeLessThan(bound);
  });
});
