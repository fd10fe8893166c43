import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, count, eq } from "drizzle-orm";
import { ledgerEntries, transactions, vendBatches, wallets } from "../../src/db/schema/index.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
const db = () => server.database.handle.db;

type Query = Record<string, string | number | undefined>;
type Listed = {
  id: string;
  mode: string;
  order_count: number;
  counts: Record<string, number>;
  created_at: string;
  completed_at: string | null;
};

/** ₦100 of MTN airtime to a phone ending in `n`. */
const airtime = (n: number) => ({
  service: "airtime",
  product_code: "mtn-airtime",
  phone_number: `0803${String(n).padStart(7, "0")}`,
  amount_kobo: 10_000,
  client_reference: `inv-${n}`,
});

/** Fixed instants, one a day, so the order and the `from`/`to` filters do not depend on the clock. */
const day = (n: number) => new Date(Date.UTC(2026, 0, 1 + n, 12));

let a: Awaited<ReturnType<typeof fundedAccount>>;
/** Account a's test batches written directly, oldest first: index n created on day n; odd ones complete. */
const seeded: string[] = [];
const seededAt = (...days: number[]) => days.map((n) => seeded[n] as string);
/** The batches a created through the API (created now, so newest of all). */
let posted: { mixed: Listed; covered: Listed };

async function seed(accountId: string, mode: "test" | "live", n: number, completed: boolean) {
  const [row] = await db()
    .insert(vendBatches)
    .values({ accountId, mode, orderCount: 1, rejections: [], createdAt: day(n), completedAt: completed ? day(n) : null })
    .returning();
  if (!row) throw new Error("no batch row");
  return row.id;
}

beforeAll(async () => {
  server = await startTestServer();
  a = await fundedAccount(server, 1_000_000, "Batch lister");
  const b = await fundedAccount(server, 0, "Other");
  for (let n = 0; n < 7; n++) seeded.push(await seed(a.id, "test", n, n % 2 === 1));
  // Another account's batches and a's live batches, on the same days: never listed with a's test key.
  for (let n = 0; n < 7; n++) {
    await seed(b.id, "test", n, false);
    await seed(a.id, "live", n, true);
  }
  const mixed = await a.client.post("/api/v1/vend/batches", { orders: [airtime(1), airtime(2), { service: "airtime" }] }, idem());
  expect(mixed.status).toBe(202);
  const covered = await a.client.post("/api/v1/vend/batches", { orders: [airtime(3)] }, idem());
  expect(covered.status).toBe(202);
  posted = { mixed: mixed.json.data, covered: covered.json.data };
});
afterAll(() => server.close());

/** Follows `next_cursor` to the end; the pages and every item in order. */
async function listAll(query: Query, limit: number, key = a.testKey) {
  const pages: Listed[][] = [];
  let cursor: string | undefined;
  do {
    const res = await server.client(key).get("/api/v1/vend/batches", { query: { ...query, limit, cursor } });
    expect(res.status).toBe(200);
    const { items, page } = res.json.data as { items: Listed[]; page: { next_cursor: string | null; has_more: boolean } };
    expect(page.has_more).toBe(page.next_cursor !== null);
    pages.push(items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return { pages, items: pages.flat() };
}

describe("GET /api/v1/vend/batches", () => {
  test("newest first by (created_at, id), three pages of 3, only the key's account and mode, counts as they stand", async () => {
    const { pages, items } = await listAll({}, 3);
    expect(pages.map((p) => p.length)).toEqual([3, 3, 3]);
    // The two posted now come first (the later one first, or by id when they share a millisecond), then days 6..0.
    const postedIds = items.slice(0, 2).map((i) => i.id);
    expect(postedIds.sort()).toEqual([posted.mixed.id, posted.covered.id].sort());
    expect(items.slice(2).map((i) => i.id)).toEqual([...seeded].reverse());
    for (let n = 1; n < items.length; n++) {
      const [prev, next] = [items[n - 1] as Listed, items[n] as Listed];
      const ordered = prev.created_at > next.created_at || (prev.created_at === next.created_at && prev.id > next.id);
      expect(ordered).toBe(true);
    }
    expect(items.every((i) => i.mode === "test")).toBe(true);
    // Counts: from the batches' transactions (queued, no worker runs here) and rejections, per batch.
    const byId = new Map(items.map((i) => [i.id, i]));
    expect(byId.get(posted.mixed.id)?.counts).toEqual({
      queued: 2,
      processing: 0,
      pending: 0,
      successful: 0,
      failed: 0,
      refused: 0,
      invalid: 1,
    });
    expect(byId.get(posted.covered.id)?.counts).toMatchObject({ queued: 1, invalid: 0, refused: 0 });
    expect(byId.get(seeded[0] as string)?.counts).toMatchObject({ queued: 0, invalid: 0 });
    expect(byId.get(posted.mixed.id)).toEqual(posted.mixed);
    // The listing reads only: 3 orders became transactions (holds), nothing more, and the wallets reconcile.
    const [txns] = await db().select({ n: count() }).from(transactions).where(eq(transactions.accountId, a.id));
    expect(Number(txns?.n)).toBe(3);
    const [wallet] = await db()
      .select()
      .from(wallets)
      .where(and(eq(wallets.accountId, a.id), eq(wallets.mode, "test")));
    const holds = await db()
      .select({ n: count() })
      .from(ledgerEntries)
      .where(and(eq(ledgerEntries.walletId, (wallet as { id: string }).id), eq(ledgerEntries.kind, "hold")));
    expect(Number(holds[0]?.n)).toBe(3);
    const rec = await server.admin.get("/admin/v1/reconciliation");
    expect(rec.json.data).toMatchObject({ balanced: true, discrepancies: [] });
  });

  test("a batch's counts move with its orders: listed as GET /vend/batches/{id} shows it", async () => {
    const [txn] = await db().select().from(transactions).where(eq(transactions.batchId, posted.covered.id));
    await db()
      .update(transactions)
      .set({ status: "processing" })
      .where(eq(transactions.id, (txn as { id: string }).id));
    const res = await a.client.get("/api/v1/vend/batches", { query: { limit: 2 } });
    const listed = (res.json.data.items as Listed[]).find((i) => i.id === posted.covered.id);
    expect(listed?.counts).toMatchObject({ queued: 0, processing: 1 });
    const detail = await a.client.get(`/api/v1/vend/batches/${posted.covered.id}`);
    expect(listed).toEqual(detail.json.data.batch);
    await db()
      .update(transactions)
      .set({ status: "queued" })
      .where(eq(transactions.id, (txn as { id: string }).id));
  });

  test("completed=true lists complete batches only, completed=false the open ones", async () => {
    const done = await listAll({ completed: "true" }, 2);
    expect(done.items.map((i) => i.id)).toEqual(seededAt(5, 3, 1));
    expect(done.items.every((i) => i.completed_at !== null)).toBe(true);
    const open = await listAll({ completed: "false" }, 2);
    expect(open.items.map((i) => i.id).slice(2)).toEqual(seededAt(6, 4, 2, 0));
    expect(
      open.items
        .map((i) => i.id)
        .slice(0, 2)
        .sort(),
    ).toEqual([posted.mixed.id, posted.covered.id].sort());
    expect(open.items.every((i) => i.completed_at === null)).toBe(true);
  });

  test("from and to filter on created_at, inclusive, and combine with completed", async () => {
    const range = { from: day(2).toISOString(), to: day(5).toISOString() };
    const { items } = await listAll(range, 10);
    expect(items.map((i) => i.id)).toEqual(seededAt(5, 4, 3, 2));
    const open = await listAll({ ...range, completed: "false" }, 10);
    expect(open.items.map((i) => i.id)).toEqual(seededAt(4, 2));
  });

  test("the other account's and the live mode's keys see their own batches only", async () => {
    const live = await listAll({}, 100, a.liveKey);
    expect(live.items).toHaveLength(7);
    expect(live.items.every((i) => i.mode === "live")).toBe(true);
    expect(live.items.some((i) => seeded.includes(i.id))).toBe(false);
  });

  test("a cursor is bound to its filters, scope and signature: reused otherwise it is 400 on field cursor", async () => {
    const first = await a.client.get("/api/v1/vend/batches", { query: { limit: 2, completed: "false" } });
    const cursor: string = first.json.data.page.next_cursor;
    expect(cursor).toBeString();
    const attempts: [string, Query][] = [
      [a.testKey, { cursor: "garbage" }],
      [a.testKey, { cursor: `${cursor}x` }],
      [a.testKey, { cursor }],
      [a.testKey, { cursor, completed: "true" }],
      [a.testKey, { cursor, completed: "false", from: day(0).toISOString() }],
      [a.liveKey, { cursor, completed: "false" }],
    ];
    for (const [key, query] of attempts) {
      const res = await server.client(key).get("/api/v1/vend/batches", { query: { limit: 2, ...query } });
      expect(res.status).toBe(400);
      expect(res.json.code).toBe("VALIDATION_FAILED");
      expect(res.json.data.errors[0].field).toBe("cursor");
    }
    const again = await a.client.get("/api/v1/vend/batches", { query: { limit: 2, completed: "false", cursor } });
    expect(again.status).toBe(200);
  });

  test.each([
    [{ completed: "maybe" }, "completed"],
    [{ from: "yesterday" }, "from"],
    [{ to: "2026-13-40T00:00:00Z" }, "to"],
    [{ from: day(5).toISOString(), to: day(1).toISOString() }, "from"],
    [{ limit: 0 }, "limit"],
    [{ limit: "many" }, "limit"],
  ] as [Query, string][])("%j is 400 naming %s, never a 5xx", async (query, field) => {
    const res = await server.client(a.testKey).get("/api/v1/vend/batches", { query });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe("VALIDATION_FAILED");
    expect(res.json.data.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  test("without a key it is 401", async () => {
    const res = await server.client("").get("/api/v1/vend/batches");
    expect(res.status).toBe(401);
  });
});
