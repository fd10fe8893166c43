import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TransactionRow } from "../../src/orders/view.ts";
import type { HttpClient } from "../helpers/http.ts";
import { insertTransactions, type NewTransactionRow, type SeedOptions } from "../helpers/seed.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

type Query = Record<string, string | number | undefined>;
type Account = { id: string; testKey: string; liveKey: string };

let server: TestServer;
let a: Account;
let b: Account;
/** Every row this file inserted, kept current as rows are added. */
const rows: TransactionRow[] = [];
const hourAgo = Date.now() - 3_600_000;

const newestFirst = (x: TransactionRow, y: TransactionRow) =>
  y.createdAt.getTime() - x.createdAt.getTime() || (x.id < y.id ? 1 : x.id > y.id ? -1 : 0);
const references = (list: TransactionRow[]) => [...list].sort(newestFirst).map((r) => r.reference);
const owned = (account: Account, mode: string) => rows.filter((r) => r.accountId === account.id && r.mode === mode);
const aTest = () => owned(a, "test");
const masked = (d: string) =>
  d.length >= 10
    ? `${d.slice(0, 4)}${"*".repeat(d.length - 7)}${d.slice(-3)}`
    : `${d.slice(0, 2)}${"*".repeat(d.length - 4)}${d.slice(-2)}`;

async function seed(account: Account, mode: "test" | "live", count: number, extra: Partial<SeedOptions> = {}) {
  const stored = await insertTransactions(server.database.handle.db, { accountId: account.id, mode, count, ...extra });
  rows.push(...stored);
  return stored;
}

/** Newer rows for A's test mode, as a client would create while someone pages. */
const insertNewer = (overrides: Partial<NewTransactionRow>) => () =>
  seed(a, "test", 2, { newest: new Date(), stepMs: 1, overrides }).then(() => undefined);

/** Follows `next_cursor` to the end; checks the page invariants on the way. */
async function collect(client: HttpClient, path: string, query: Query, limit: number, between?: () => Promise<void>) {
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const res = await client.get(path, { query: { ...query, limit, cursor } });
    expect(res.status).toBe(200);
    const { items, page } = res.json.data;
    if (page.has_more) {
      expect(items.length).toBe(limit);
      expect(page.next_cursor).toBeString();
    } else {
      expect(items.length).toBeLessThanOrEqual(limit);
      expect(page.next_cursor).toBeNull();
    }
    seen.push(...items.map((item: { reference: string }) => item.reference));
    cursor = page.next_cursor ?? undefined;
    pages += 1;
    if (cursor && between) await between();
  } while (cursor);
  expect(new Set(seen).size).toBe(seen.length);
  return { seen, pages };
}

beforeAll(async () => {
  server = await startTestServer();
  a = await server.createAccount("Lister A");
  b = await server.createAccount("Lister B");
  await seed(a, "test", 1_200, { newest: new Date(hourAgo) });
  await seed(a, "live", 40, { newest: new Date(hourAgo - 30_000) });
  await seed(b, "test", 40, { newest: new Date(hourAgo - 45_000) });
  await seed(b, "live", 15, { newest: new Date(hourAgo - 15_000) });
}, 60_000);
afterAll(() => server.close());

describe("GET /api/v1/transactions filters", () => {
  const cases: [string, () => { query: Query; matches: (r: TransactionRow) => boolean; insert: Partial<NewTransactionRow> }][] = [
    ["no filter", () => ({ query: {}, matches: () => true, insert: {} })],
    ["status", () => ({ query: { status: "failed" }, matches: (r) => r.status === "failed", insert: { status: "failed" } })],
    [
      "destination (phone given as +234…)",
      () => {
        const phone = aTest().find((r) => r.service === "airtime")?.destination ?? "";
        return {
          query: { destination: `+234${phone.slice(1)}` },
          matches: (r) => r.destination === phone,
          insert: { destination: phone },
        };
      },
    ],
    [
      "destination (meter number)",
      () => {
        const meter = aTest().find((r) => r.service === "electricity")?.destination ?? "";
        return { query: { destination: meter }, matches: (r) => r.destination === meter, insert: { destination: meter } };
      },
    ],
    [
      "network",
      () => ({
        query: { network: "glo" },
        matches: (r) => r.network === "glo",
        insert: { network: "glo", service: "airtime", productCode: "glo-airtime" },
      }),
    ],
    [
      "service",
      () => ({
        query: { service: "electricity" },
        matches: (r) => r.service === "electricity",
        insert: { service: "electricity" },
      }),
    ],
    [
      "from and to (inclusive, bounds on tied rows)",
      () => {
        const sorted = [...aTest()].sort(newestFirst);
        const to = sorted[204]?.createdAt ?? new Date();
        const from = sorted[509]?.createdAt ?? new Date();
        return {
          query: { from: from.toISOString(), to: to.toISOString() },
          matches: (r) => r.createdAt >= from && r.createdAt <= to,
          insert: {},
        };
      },
    ],
    [
      "from only",
      () => {
        const from = [...aTest()].sort(newestFirst)[300]?.createdAt ?? new Date();
        return { query: { from: from.toISOString() }, matches: (r) => r.createdAt >= from, insert: { status: "queued" } };
      },
    ],
    [
      "to only (offset form)",
      () => {
        const to = [...aTest()].sort(newestFirst)[900]?.createdAt ?? new Date();
        const shifted = new Date(to.getTime() + 3_600_000).toISOString().replace("Z", "+01:00");
        return { query: { to: shifted }, matches: (r) => r.createdAt <= to, insert: {} };
      },
    ],
    [
      "search: client reference prefix",
      () => {
        const ref = aTest().find((r) => r.clientReference?.endsWith("-1"))?.clientReference ?? "";
        return {
          query: { search: ref },
          matches: (r) => r.clientReference?.startsWith(ref) ?? false,
          insert: { clientReference: `${ref}99` },
        };
      },
    ],
    [
      "search: 5 digits inside the masked part of a phone",
      () => {
        const digits = (aTest().find((r) => r.service === "data")?.destination ?? "").slice(4, 9);
        return {
          query: { search: digits },
          matches: (r) => r.destination.includes(digits),
          insert: { destination: `0909${digits}12` },
        };
      },
    ],
    [
      "search: a phone's last 4 digits",
      () => {
        const digits = (aTest().find((r) => r.service === "data")?.destination ?? "").slice(-4);
        return {
          query: { search: digits },
          matches: (r) => r.destination.endsWith(digits),
          insert: { destination: `0909123${digits}` },
        };
      },
    ],
    [
      "search: phone given as 234…",
      () => {
        const phone = aTest().filter((r) => r.service === "airtime")[1]?.destination ?? "";
        return {
          query: { search: `234${phone.slice(1)}` },
          matches: (r) => r.destination.includes(phone),
          insert: { destination: phone },
        };
      },
    ],
  ];

  test.each(cases)("%s: pages equal the filtered set, newest first, even while rows are added", async (_name, build) => {
    const { query, matches, insert } = build();
    const expected = references(aTest().filter(matches));
    expect(expected.length).toBeGreaterThanOrEqual(20);
    const limit = Math.min(100, Math.max(3, Math.ceil(expected.length / 4)));
    const { seen, pages } = await collect(server.client(a.testKey), "/api/v1/transactions", query, limit, insertNewer(insert));
    expect(pages).toBeGreaterThanOrEqual(Object.keys(query).length === 0 ? 12 : 4);
    expect(seen).toEqual(expected);
  });

  test("search by exact reference finds that one transaction", async () => {
    const target = aTest()[700];
    const res = await server.client(a.testKey).get("/api/v1/transactions", { query: { search: target?.reference } });
    expect(res.json.data.items.map((i: { reference: string }) => i.reference)).toEqual([target?.reference]);
  });

  test("filters combine", async () => {
    const expected = references(aTest().filter((r) => r.network === "mtn" && r.status === "successful"));
    const { seen } = await collect(
      server.client(a.testKey),
      "/api/v1/transactions",
      { network: "mtn", status: "successful" },
      30,
    );
    expect(seen).toEqual(expected);
  });
});

describe("GET /api/v1/transactions paging rules", () => {
  test("limit defaults to 25; above 100 is treated as 100", async () => {
    const client = server.client(a.testKey);
    expect((await client.get("/api/v1/transactions")).json.data.items).toHaveLength(25);
    const big = await client.get("/api/v1/transactions", { query: { limit: 101 } });
    expect(big.status).toBe(200);
    expect(big.json.data.items).toHaveLength(100);
    expect(big.json.data.page.has_more).toBe(true);
  });

  test.each([
    [{ limit: 0 }, "limit"],
    [{ limit: -1 }, "limit"],
    [{ limit: "abc" }, "limit"],
    [{ limit: 2.5 }, "limit"],
    [{ status: "done" }, "status"],
    [{ service: "gas" }, "service"],
    [{ from: "yesterday" }, "from"],
    [{ to: "2026-13-01T00:00:00Z" }, "to"],
    [{ from: "2026-02-01T00:00:00Z", to: "2026-01-01T00:00:00Z" }, "from"],
  ])("%j is 400 naming %s", async (query, field) => {
    const res = await server.client(a.testKey).get("/api/v1/transactions", { query });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe("VALIDATION_FAILED");
    expect(res.json.data.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  test("a malformed, tampered, re-filtered or foreign cursor is 400 on field cursor", async () => {
    const first = await server.client(a.testKey).get("/api/v1/transactions", { query: { limit: 5, status: "successful" } });
    const cursor: string = first.json.data.page.next_cursor;
    expect(cursor).toBeString();
    const flip = (s: string, at: number) => `${s.slice(0, at)}${s[at] === "A" ? "B" : "A"}${s.slice(at + 1)}`;
    const attempts: [string, Query][] = [
      [a.testKey, { cursor: "garbage" }],
      [a.testKey, { cursor: "a.b.c" }],
      [a.testKey, { cursor: `${cursor}x` }],
      [a.testKey, { cursor: flip(cursor, 5) }],
      [a.testKey, { cursor: flip(cursor, cursor.length - 2) }],
      [a.testKey, { cursor, status: "failed" }],
      [a.testKey, { cursor }],
      [a.testKey, { cursor, status: "successful", search: "0803" }],
      [a.liveKey, { cursor, status: "successful" }],
      [b.testKey, { cursor, status: "successful" }],
    ];
    for (const [key, query] of attempts) {
      const res = await server.client(key).get("/api/v1/transactions", { query: { limit: 5, ...query } });
      expect(res.status).toBe(400);
      expect(res.json.message).toBe("Invalid cursor");
      expect(res.json.data.errors[0].field).toBe("cursor");
    }
    const again = await server
      .client(a.testKey)
      .get("/api/v1/transactions", { query: { limit: 5, status: "successful", cursor } });
    expect(again.status).toBe(200);
  });
});

describe("isolation and masking", () => {
  test("each key lists only its own account and mode", async () => {
    for (const [key, account, mode] of [
      [a.liveKey, a, "live"],
      [b.testKey, b, "test"],
      [b.liveKey, b, "live"],
    ] as const) {
      const { seen } = await collect(server.client(key), "/api/v1/transactions", {}, 100);
      expect(seen).toEqual(references(owned(account, mode)));
    }
    const shared = owned(b, "test")[0]?.destination ?? "";
    const { seen } = await collect(server.client(a.testKey), "/api/v1/transactions", { destination: shared }, 100);
    expect(seen).toEqual(references(aTest().filter((r) => r.destination === shared)));
  });

  test("GET one: own reference only; another account's or mode's is 404", async () => {
    const own = aTest()[3];
    const live = owned(a, "live")[0];
    const foreign = owned(b, "test")[0];
    const client = server.client(a.testKey);
    const res = await client.get(`/api/v1/transactions/${own?.reference}`, { query: { wait: 5 } });
    expect(res.status).toBe(200);
    expect(res.json.data.reference).toBe(own?.reference);
    expect(res.json.data.destination).toBe(masked(own?.destination ?? ""));
    for (const reference of [live?.reference, foreign?.reference, "txn_doesnotexist0000000000000"]) {
      const missing = await client.get(`/api/v1/transactions/${reference}`);
      expect(missing.status).toBe(404);
      expect(missing.json.code).toBe("NOT_FOUND");
    }
    expect((await server.client(a.liveKey).get(`/api/v1/transactions/${live?.reference}`)).json.data.mode).toBe("live");
  });

  test("listed destinations and their metadata copies are masked", async () => {
    const res = await server.client(a.testKey).get("/api/v1/transactions", { query: { limit: 100 } });
    const byReference = new Map(rows.map((r) => [r.reference, r]));
    for (const item of res.json.data.items) {
      const real = byReference.get(item.reference)?.destination ?? "";
      expect(item.destination).toBe(masked(real));
      expect(res.text).not.toContain(real);
    }
  });
});

describe("admin transactions", () => {
  test("lists across accounts; account_id and mode narrow it", async () => {
    const all = await collect(server.admin, "/admin/v1/transactions", {}, 100);
    expect(all.seen).toEqual(references(rows));
    const filters: [Query, (r: TransactionRow) => boolean][] = [
      [{ account_id: b.id }, (r) => r.accountId === b.id],
      [{ account_id: a.id, mode: "live" }, (r) => r.accountId === a.id && r.mode === "live"],
      [{ mode: "live", status: "successful" }, (r) => r.mode === "live" && r.status === "successful"],
    ];
    for (const [query, matches] of filters) {
      const { seen } = await collect(server.admin, "/admin/v1/transactions", query, 7);
      expect(seen).toEqual(references(rows.filter(matches)));
    }
  });

  test("admin cursor is bound to account_id; one transaction by reference with its account", async () => {
    const first = await server.admin.get("/admin/v1/transactions", { query: { account_id: a.id, limit: 2 } });
    const bad = await server.admin.get("/admin/v1/transactions", {
      query: { account_id: b.id, cursor: first.json.data.page.next_cursor },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.data.errors[0].field).toBe("cursor");
    const target = owned(b, "live")[0];
    const one = await server.admin.get(`/admin/v1/transactions/${target?.reference}`);
    expect(one.status).toBe(200);
    expect(one.json.data.account_id).toBe(b.id);
    expect(one.json.data.destination).toBe(masked(target?.destination ?? ""));
    expect((await server.admin.get("/admin/v1/transactions/txn_doesnotexist0000000000000")).status).toBe(404);
  });
});

describe("search", () => {
  let c: Account;
  const cTest = () => owned(c, "test");
  const find = async (search: string, query: Query = {}, path = "/api/v1/transactions") => {
    const client = path.startsWith("/admin") ? server.admin : server.client(c.testKey);
    return (await collect(client, path, { ...query, search }, 4)).seen;
  };
  // A client may store our reference as its own, plus a suffix: one search finds both.
  const ourReference = "txn_7777aaaaBBBBccccDDDDeeee";
  /** Rows of C's test mode, newest first, 90 s apart, with these columns. */
  const seedC = (rowsOf: Partial<NewTransactionRow>[], newest: number) =>
    seed(c, "test", rowsOf.length, { newest: new Date(newest), stepMs: 90_000, generate: (i) => rowsOf[i] ?? {} });

  beforeAll(async () => {
    c = await server.createAccount("Searcher C");
    const start = hourAgo - 7_200_000;
    // The reference-like, client-reference and destination matches of "7777" interleave in time.
    await seedC(
      Array.from({ length: 30 }, (_, i) => {
        if (i % 3 === 0) return { clientReference: `7777-order-${i}`, destination: "08021110000" };
        if (i % 3 === 1) return { clientReference: `order-${i}`, destination: `0802${String(i).padStart(3, "0")}7777` };
        return { clientReference: `77770${i}`, destination: `080397777${String(i).padStart(2, "0")}` };
      }),
      start,
    );
    await seedC(
      [
        { reference: ourReference, clientReference: null, destination: "08021110001" },
        { clientReference: `${ourReference}-a`, destination: "08021110011" },
        { clientReference: `${ourReference}-b`, destination: "08021110012" },
        { clientReference: "disc%10", destination: "08021110002" },
        { clientReference: "disc_10", destination: "08021110003" },
        { clientReference: "disc\\10", destination: "08021110004" },
        { clientReference: "discX10", destination: "08021110005" },
        { clientReference: "disc910", destination: "08021110006" },
        { clientReference: "INV-100", destination: "08021110007" },
        { clientReference: "INV-1001", destination: "08021110008" },
        { clientReference: "inv-1002", destination: "08021110009" },
        { clientReference: "123-abc", destination: "08091230123" },
        { clientReference: null, destination: "08031234567" },
        { clientReference: null, destination: "08031234567" },
        { clientReference: "08031234567-retry", destination: "08131234567" },
        { clientReference: null, destination: "4512345678901" },
        // Support's "last 4 digits", 5964: at the end of a phone, inside one, at the end of the longest meter, and
        // a phone holding both runs of 4 of 59645 but not 59645 itself.
        { clientReference: null, destination: "08161225964" },
        { clientReference: null, destination: "08159641122" },
        { clientReference: null, destination: "4511122235964" },
        { clientReference: null, destination: "09159649645" },
      ],
      start - 3_600_000,
    );
  }, 60_000);

  test("the reference matches exactly and case-sensitively", async () => {
    const reference = cTest().find((r) => r.clientReference === "disc_10")?.reference ?? "";
    expect(await find(reference)).toEqual([reference]);
    expect(await find(reference.toUpperCase())).toEqual([]);
    expect(await find(reference.slice(0, -1))).toEqual([]);
  });

  test("the client reference matches by prefix, case-sensitively", async () => {
    const byClientReference = (...refs: string[]) => references(cTest().filter((r) => refs.includes(r.clientReference ?? "")));
    expect(await find("INV-100")).toEqual(byClientReference("INV-100", "INV-1001"));
    expect(await find("INV-1001")).toEqual(byClientReference("INV-1001"));
    expect(await find("inv-")).toEqual(byClientReference("inv-1002"));
  });

  test.each([
    ["disc%", ["disc%10"]],
    ["disc_", ["disc_10"]],
    ["disc\\", ["disc\\10"]],
    ["disc", ["disc%10", "disc_10", "disc\\10", "discX10", "disc910"]],
  ])("%p: LIKE's metacharacters in a search are plain characters", async (search, expected) => {
    expect(await find(search)).toEqual(references(cTest().filter((r) => expected.includes(r.clientReference ?? ""))));
  });

  test("5 digits or more match anywhere in the destination, 4 its end; fewer match no destination", async () => {
    expect(await find("0123")).toEqual(references(cTest().filter((r) => r.destination === "08091230123")));
    expect(await find("12345678")).toEqual(references(cTest().filter((r) => r.destination === "4512345678901")));
    // "123" is a client reference prefix; destinations containing 123 are not searched for 3 digits.
    expect(await find("123")).toEqual(references(cTest().filter((r) => r.clientReference === "123-abc")));
    expect(await find("802")).toEqual([]);
  });

  test("4 digits find the destinations ending in them (support's last four), whatever their length", async () => {
    const holding = (digits: string) => references(cTest().filter((r) => r.destination.includes(digits)));
    const found = await find("5964");
    expect(found).toEqual(references(cTest().filter((r) => r.destination.endsWith("5964"))));
    const destinations = new Set(found.map((reference) => cTest().find((r) => r.reference === reference)?.destination));
    // Not 08159641122 nor 09159649645: 5964 is inside them, not their last four.
    expect(destinations).toEqual(new Set(["08161225964", "4511122235964"]));
    expect(await find("5964", {}, "/admin/v1/transactions")).toEqual(
      references(rows.filter((r) => r.destination.endsWith("5964"))),
    );
    // Inside a destination, 5 digits find it.
    expect(await find("15964")).toEqual(holding("15964"));
    expect(holding("15964")).toHaveLength(2);
    // Longer runs are the digits in a row, not each run of 4 somewhere.
    expect(await find("59645")).toEqual([]);
    expect(holding("49645")).toHaveLength(1);
    expect(await find("49645")).toEqual(holding("49645"));
    expect(await find("235964")).toEqual(holding("235964"));
  });

  test.each(["08031234567", "2348031234567", "+2348031234567", "0803 123 4567", "+234-803-123-4567"])(
    "phone %p finds that phone exactly, in whichever form",
    async (search) => {
      const expected = references(cTest().filter((r) => r.destination === "08031234567"));
      expect(expected).toHaveLength(2);
      const found = await find(search);
      // The 11-digit spelling is also a client reference prefix of another row.
      if (search === "08031234567")
        expected.unshift(...references(cTest().filter((r) => r.clientReference === "08031234567-retry")));
      expect(new Set(found)).toEqual(new Set(expected));
      expect(found).toEqual(references(cTest().filter((r) => expected.includes(r.reference))));
    },
  );

  test("a row matching several alternatives is listed once; pages across alternatives follow the cursor", async () => {
    const matches = (r: TransactionRow) => (r.clientReference ?? "").startsWith("7777") || r.destination.endsWith("7777");
    const expected = references(cTest().filter(matches));
    // 10 by client reference, 10 by the destination's last four, 10 by client reference with 7777 inside (not at
    // the end of) the destination.
    expect(expected).toHaveLength(30);
    expect(await find("7777")).toEqual(expected);
    const successful = references(cTest().filter((r) => matches(r) && r.status === "successful"));
    expect(successful.length).toBeGreaterThan(4);
    expect(await find("7777", { status: "successful" })).toEqual(successful);
  });

  test("a reference and the client references it begins are found together", async () => {
    const expected = references(
      cTest().filter((r) => r.reference === ourReference || r.clientReference?.startsWith(ourReference)),
    );
    expect(expected).toHaveLength(3);
    expect((await collect(server.client(c.testKey), "/api/v1/transactions", { search: ourReference }, 1)).seen).toEqual(expected);
  });

  test("a cursor of one search does not page another", async () => {
    const first = await server.client(c.testKey).get("/api/v1/transactions", { query: { search: "7777", limit: 3 } });
    const other = await server
      .client(c.testKey)
      .get("/api/v1/transactions", { query: { search: "77770", limit: 3, cursor: first.json.data.page.next_cursor } });
    expect(other.status).toBe(400);
    expect(other.json.data.errors[0].field).toBe("cursor");
  });

  test("the admin search spans accounts, pages across alternatives, and narrows to one account", async () => {
    const matches = (r: TransactionRow) => (r.clientReference ?? "").startsWith("7777") || r.destination.includes("7777");
    expect(await find("7777", {}, "/admin/v1/transactions")).toEqual(references(rows.filter(matches)));
    const phone = aTest().find((r) => r.service === "airtime")?.destination ?? "";
    const everywhere = references(rows.filter((r) => r.destination === phone || (r.clientReference ?? "").startsWith(phone)));
    expect(everywhere.length).toBeGreaterThan(4);
    expect(await find(`+234${phone.slice(1)}`, {}, "/admin/v1/transactions")).toEqual(everywhere);
    const inA = references(rows.filter((r) => r.accountId === a.id && r.destination === phone));
    expect(await find(phone, { account_id: a.id, mode: "test" }, "/admin/v1/transactions")).toEqual(
      references(aTest().filter((r) => r.destination === phone)),
    );
    expect(inA.length).toBeGreaterThan(0);
  });
});

// Last in the file: these vends are not in `rows`, which the tests above compare against.
describe("paging while real vends are accepted", () => {
  test("vends accepted over HTTP between page requests never enter the pages already being walked", async () => {
    await server.admin.post(
      `/admin/v1/accounts/${a.id}/wallet/credit`,
      { mode: "test", amount_kobo: 10_000_000, note: "paging test" },
      {
        headers: { "idempotency-key": "paging-float" },
      },
    );
    const before = references(aTest());
    const client = server.client(a.testKey);
    let vends = 0;
    const vendBetweenPages = async () => {
      const res = await client.post(
        "/api/v1/vend",
        { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 5_000 },
        { headers: { "idempotency-key": `paging-vend-${vends++}` } },
      );
      expect(res.status).toBe(202);
    };
    const { seen, pages } = await collect(client, "/api/v1/transactions", {}, 100, vendBetweenPages);
    expect(pages).toBeGreaterThanOrEqual(12);
    expect(vends).toBe(pages - 1);
    expect(seen).toEqual(before);
    const fresh = await client.get("/api/v1/transactions", { query: { limit: vends } });
    expect(
      fresh.json.data.items.every(
        (t: { product_code: string; status: string }) => t.product_code === "mtn-airtime" && t.status === "queued",
      ),
    ).toBe(true);
  });
});
