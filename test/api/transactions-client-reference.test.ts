import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { count, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import * as schema from "../../src/db/schema/index.ts";
import { ledgerEntries, transactions } from "../../src/db/schema/index.ts";
import { CursorCodec } from "../../src/lib/cursor.ts";
import { listTransactions } from "../../src/orders/lookup.ts";
import { fundedAccount, idem, newKey } from "../helpers/accounts.ts";
import { insertBulkTransactions } from "../helpers/bulk-transactions.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import type { HttpClient } from "../helpers/http.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const order = (clientReference: string, phone = "08031234567") => ({
  product_code: "mtn-airtime",
  phone_number: phone,
  amount_kobo: 10_000,
  client_reference: clientReference,
});

async function vend(client: HttpClient, clientReference: string): Promise<string> {
  const res = await client.post("/api/v1/vend", order(clientReference), idem());
  expect(res.status).toBe(202);
  return res.json.data.reference;
}

const byClientReference = (client: HttpClient, clientReference: string, query: Record<string, string | number> = {}) =>
  client.get("/api/v1/transactions", { query: { client_reference: clientReference, ...query } });

describe("GET /api/v1/transactions?client_reference=", () => {
  test("exact and case-sensitive, the key's own account and mode only, newest first", async () => {
    const { client } = await fundedAccount(server, 1_000_000);
    const other = await fundedAccount(server, 1_000_000, "other");
    const first = await vend(client, "INV-7");
    await vend(client, "INV-70");
    await vend(client, "inv-7");
    await vend(client, "INV-%");
    const second = await vend(client, "INV-7"); // client references are the client's: repeats are allowed
    await vend(other.client, "INV-7");

    const res = await byClientReference(client, "INV-7");
    expect(res.status).toBe(200);
    expect(res.json.data.items.map((t: { reference: string }) => t.reference)).toEqual([second, first]);
    expect(res.json.data.items.every((t: { client_reference: string }) => t.client_reference === "INV-7")).toBe(true);
    // `%` and `_` are plain characters; a prefix is not a match.
    expect((await byClientReference(client, "INV-%")).json.data.items).toHaveLength(1);
    expect((await byClientReference(client, "INV-_")).json.data.items).toHaveLength(0);
    expect((await byClientReference(client, "INV-")).json.data.items).toHaveLength(0);
    // The live key's mode has none of them.
    expect((await byClientReference(server.client(other.liveKey), "INV-7")).json.data.items).toHaveLength(0);
    // Combined with the other filters.
    expect((await byClientReference(client, "INV-7", { status: "queued" })).json.data.items).toHaveLength(2);
    expect((await byClientReference(client, "INV-7", { status: "failed" })).json.data.items).toHaveLength(0);
  });

  test("pages with cursors bound to the client reference", async () => {
    const { client } = await fundedAccount(server, 1_000_000);
    const references = [await vend(client, "PAGED"), await vend(client, "PAGED"), await vend(client, "PAGED")];
    await vend(client, "OTHER");
    const page1 = await byClientReference(client, "PAGED", { limit: 2 });
    expect(page1.json.data.page.has_more).toBe(true);
    const page2 = await byClientReference(client, "PAGED", { limit: 2, cursor: page1.json.data.page.next_cursor });
    expect(page2.json.data.page.has_more).toBe(false);
    const listed = [...page1.json.data.items, ...page2.json.data.items].map((t: { reference: string }) => t.reference);
    expect(listed).toEqual(references.reverse());
    const reused = await byClientReference(client, "OTHER", { limit: 2, cursor: page1.json.data.page.next_cursor });
    expect(reused.status).toBe(400);
    expect(reused.json.data.errors[0].field).toBe("cursor");
  });

  test.each([
    ["empty", ""],
    ["over 128 characters", "x".repeat(129)],
  ])("%s: 400 naming client_reference", async (_name, value) => {
    const { client } = await fundedAccount(server, 0);
    const res = await byClientReference(client, value);
    expect(res.status).toBe(400);
    expect(res.json.code).toBe("VALIDATION_FAILED");
    expect(res.json.data.errors[0].field).toContain("client_reference");
  });
});

describe("a client that lost the answer finds its order", () => {
  test("by replaying its Idempotency-Key, or by its client_reference: the same one order, charged once", async () => {
    const { id, client } = await fundedAccount(server, 100_000);
    const key = newKey("lost");
    const body = order("ORDER-42");
    const first = await client.post("/api/v1/vend", body, idem(key)); // the answer the client never read

    const replay = await client.post("/api/v1/vend", body, idem(key));
    expect(replay.status).toBe(first.status);
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");

    const found = (await byClientReference(client, "ORDER-42")).json.data.items;
    expect(found.map((t: { reference: string }) => t.reference)).toEqual([first.json.data.reference]);

    // Nothing was created twice: one transaction, one hold, 9,700 held; the wallets reconcile.
    const db = server.database.handle.db;
    const [placed] = await db.select({ n: count() }).from(transactions).where(eq(transactions.accountId, id));
    expect(placed?.n).toBe(1);
    const [holds] = await db
      .select({ n: count() })
      .from(ledgerEntries)
      .where(eq(ledgerEntries.transactionId, first.json.data.id));
    expect(holds?.n).toBe(1);
    expect((await client.get("/api/v1/wallet")).json.data).toMatchObject({ held_kobo: 9_700, available_kobo: 90_300 });
    const reconciliation = await server.admin.get("/admin/v1/reconciliation");
    expect(reconciliation.json.data).toMatchObject({ balanced: true, discrepancies: [] });
  });
});

// Plans are PostgreSQL's (statistics, costs): the embedded engine is not what runs at scale.
const onPostgres = Boolean(process.env.DATABASE_URL);

type PlanNode = { "Node Type": string; "Relation Name"?: string; "Index Name"?: string; Plans?: PlanNode[] };
const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

describe.skipIf(!onPostgres)("the client_reference filter's plan at 20,000 rows (PostgreSQL)", () => {
  let database: TestDatabase;
  let sql: postgres.Sql;
  let accountId: string;

  beforeAll(async () => {
    database = await createTestDatabase({ maxConnections: 1 });
    sql = postgres(database.url ?? "", { max: 1, onnotice: () => {} });
    const [account] = await sql<{ id: string }[]>`insert into accounts (name) values ('listed') returning id`;
    accountId = account?.id ?? "";
    await sql`insert into accounts (name) select 'other ' || n from generate_series(1, 20) n`;
    await insertBulkTransactions(sql, accountId, 20_000);
    await sql`analyze transactions`;
  }, 120_000);
  afterAll(async () => {
    await sql?.end({ timeout: 5 });
    await database?.drop();
  });

  test("an exact client reference reads transactions_client_reference_listing_idx, no sequential scan", async () => {
    const [sample] = await sql<{ client_reference: string }[]>`
      select client_reference from transactions
      where account_id = ${accountId} and mode = 'test' and client_reference is not null
      order by created_at desc offset 500 limit 1`;
    if (!sample) throw new Error("no sample row");
    const logged: { query: string; params: unknown[] }[] = [];
    const db = drizzle(sql, { schema, logger: { logQuery: (query, params) => logged.push({ query, params }) } });
    const page = await listTransactions(
      db,
      new CursorCodec("plans-test-secret"),
      { accountId, mode: "test" },
      {
        client_reference: sample.client_reference,
      },
    );
    expect(page.items.map((t) => t.client_reference)).toEqual([sample.client_reference]);
    const [statement] = logged;
    if (!statement || logged.length !== 1) throw new Error(`expected one statement, got ${logged.length}`);
    const [row] = await sql.unsafe(`explain (format json) ${statement.query}`, statement.params as never[]);
    const [explained] = (row?.["QUERY PLAN"] ?? []) as { Plan: PlanNode }[];
    if (!explained) throw new Error("no plan");
    const nodes = nodesOf(explained.Plan);
    const onTransactions = nodes.filter((n) => n["Relation Name"] === "transactions");
    expect(onTransactions.map((n) => n["Node Type"])).not.toContain("Seq Scan");
    expect(onTransactions.map((n) => n["Index Name"])).toContain("transactions_client_reference_listing_idx");
  });
});
