import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import * as schema from "../../src/db/schema/index.ts";
import { CursorCodec } from "../../src/lib/cursor.ts";
import { loadConfig } from "../../src/load-config.ts";
import {
  type AdminListTransactionsQuery,
  adminListTransactions,
  type ListTransactionsQuery,
  listTransactions,
} from "../../src/orders/lookup.ts";
import { stuckCutoff } from "../../src/orders/statements/raise-stuck.ts";
import { settlementReport } from "../../src/transactions/settlement.ts";
import { insertBulkTransactions } from "../helpers/bulk-transactions.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";

// Plans are PostgreSQL's (statistics, costs): the embedded engine is not what runs at scale.
const onPostgres = Boolean(process.env.DATABASE_URL);

type PlanNode = { "Node Type": string; "Relation Name"?: string; "Index Name"?: string; Plans?: PlanNode[] };
const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

let database: TestDatabase;
let sql: postgres.Sql;
let accountId: string;
let sample: { reference: string; client_reference: string; destination: string; created_at: Date };
const logged: { query: string; params: unknown[] }[] = [];
const cursors = new CursorCodec("plans-test-secret");

/** The plan of the first-page statement a listing call sends, as PostgreSQL would run it with these values. */
async function planOf(list: (db: ReturnType<typeof drizzle<typeof schema>>) => Promise<unknown>): Promise<PlanNode[]> {
  const db = drizzle(sql, { schema, logger: { logQuery: (query, params) => logged.push({ query, params }) } });
  logged.length = 0;
  await list(db);
  const [statement] = logged;
  if (!statement || logged.length !== 1) throw new Error(`expected one statement, got ${logged.length}`);
  const [row] = await sql.unsafe(`explain (format json) ${statement.query}`, statement.params as never[]);
  const [explained] = (row?.["QUERY PLAN"] ?? []) as { Plan: PlanNode }[];
  if (!explained) throw new Error("no plan");
  return nodesOf(explained.Plan);
}

describe.skipIf(!onPostgres)("listing plans at 20,000 rows (PostgreSQL)", () => {
  beforeAll(async () => {
    database = await createTestDatabase({ maxConnections: 1 });
    sql = postgres(database.url ?? "", { max: 1, onnotice: () => {} });
    const [account] = await sql<{ id: string }[]>`insert into accounts (name) values ('listed') returning id`;
    accountId = account?.id ?? "";
    await sql`insert into accounts (name) select 'other ' || n from generate_series(1, 20) n`;
    await insertBulkTransactions(sql, accountId, 20_000);
    await sql`analyze transactions`;
    const [row] = await sql<(typeof sample)[]>`
      select reference, client_reference, destination, created_at from transactions
      where account_id = ${accountId} and service = 'airtime' and client_reference is not null
      order by created_at desc offset 500 limit 1`;
    if (!row) throw new Error("no sample row");
    sample = row;
  }, 120_000);
  afterAll(async () => {
    await sql?.end({ timeout: 5 });
    await database?.drop();
  });

  const scope = () => ({ accountId, mode: "test" as const });
  const clientCases: [string, () => ListTransactionsQuery][] = [
    ["no filter", () => ({})],
    ["status (rare)", () => ({ status: "processing" })],
    ["status (common)", () => ({ status: "failed" })],
    ["network", () => ({ network: "glo" })],
    ["service", () => ({ service: "cable" })],
    ["destination", () => ({ destination: sample.destination })],
    [
      "from and to",
      () => ({ from: new Date(sample.created_at.getTime() - 3_600_000).toISOString(), to: sample.created_at.toISOString() }),
    ],
    ["search: reference", () => ({ search: sample.reference })],
    ["search: client reference", () => ({ search: sample.client_reference })],
    ["search: client reference prefix", () => ({ search: sample.client_reference.slice(0, 9) })],
    ["search: destination digits", () => ({ search: sample.destination.slice(5, 9) })],
    ["search: phone, 234… form", () => ({ search: `234${sample.destination.slice(1)}` })],
    ["search with status", () => ({ search: sample.destination.slice(4, 9), status: "successful" })],
  ];
  const adminCases: [string, () => AdminListTransactionsQuery][] = [
    ["admin: no filter", () => ({})],
    ["admin: account", () => ({ account_id: accountId })],
    ["admin: status (rare)", () => ({ status: "processing" })],
    ["admin: destination", () => ({ destination: sample.destination })],
    ["admin: search reference", () => ({ search: sample.reference })],
    ["admin: search client reference", () => ({ search: sample.client_reference })],
    ["admin: search destination digits", () => ({ search: sample.destination.slice(5, 9) })],
    ["admin: account and search", () => ({ account_id: accountId, search: sample.destination })],
    ["admin: stuck", () => ({ stuck: true })],
  ];

  const expectIndexed = (nodes: PlanNode[]) => {
    const onTransactions = nodes.filter((n) => n["Relation Name"] === "transactions");
    expect(onTransactions.length).toBeGreaterThan(0);
    expect(onTransactions.map((n) => n["Node Type"])).not.toContain("Seq Scan");
    const indexes = nodes.map((n) => n["Index Name"]).filter(Boolean);
    expect(indexes.length).toBeGreaterThan(0);
  };

  test.each(clientCases)("%s: the first page is read through indexes, no sequential scan", async (_name, query) => {
    expectIndexed(await planOf((db) => listTransactions(db, cursors, scope(), query())));
  });

  test.each(adminCases)("%s: the first page is read through indexes, no sequential scan", async (_name, query) => {
    expectIndexed(await planOf((db) => adminListTransactions(db, cursors, query(), stuckCutoff(loadConfig({})))));
  });

  test("the settlement report reads one provider's day through the settlement index", async () => {
    // The rows span the last 17 hours, so "today" is anything from a few rows to all of them depending on the hour
    // the test runs at. Completions spread over 30 days make one day about a thirtieth of the table at any hour.
    await sql`update transactions set completed_at = completed_at - (abs(hashtext(reference)) % 30) * interval '1 day'
      where completed_at is not null`;
    await sql`analyze transactions`;
    const day = new Date(Date.now() - 10 * 86_400_000).toISOString().slice(0, 10);
    const [{ rows } = { rows: 0 }] = await sql<{ rows: number }[]>`
      select count(*)::int as rows from transactions
      where status = 'successful' and completed_at >= ${`${day}T00:00:00Z`} and completed_at < ${`${day}T00:00:00Z`}::timestamptz + interval '1 day'`;
    expect(rows).toBeGreaterThan(0);
    const nodes = await planOf((db) => settlementReport(db, { provider: "sandbox", date: day, mode: "test" }));
    expectIndexed(nodes);
    expect(nodes.map((n) => n["Index Name"])).toContain("transactions_settlement_idx");
  });

  const unionOf = (nodes: PlanNode[]) => {
    const union = nodes.find((n) => n["Node Type"] === "Append");
    const indexes = (union?.Plans ?? []).map((branch) => nodesOf(branch).find((n) => n["Index Name"])?.["Index Name"]);
    return { branches: union?.Plans?.map((n) => n["Node Type"]), indexes };
  };

  test("search reads each alternative as its own newest-first page, not one `or` over several columns", async () => {
    const digits = unionOf(
      await planOf((db) => listTransactions(db, cursors, scope(), { search: sample.destination.slice(4, 9) })),
    );
    // Digits cannot be a reference (`txn_…`): the client reference's page and the destination's.
    expect(digits.branches).toEqual(["Limit", "Limit"]);
    expect(digits.indexes).toEqual(["transactions_client_reference_listing_idx", "transactions_destination_trgm_idx"]);
    // The last four: the account's newest of them straight from their index, nothing else read.
    const lastFour = unionOf(
      await planOf((db) => listTransactions(db, cursors, scope(), { search: sample.destination.slice(-4) })),
    );
    expect(lastFour.branches).toEqual(["Limit", "Limit"]);
    expect(lastFour.indexes).toEqual(["transactions_client_reference_listing_idx", "transactions_destination_last4_idx"]);
    const reference = unionOf(await planOf((db) => listTransactions(db, cursors, scope(), { search: sample.reference })));
    expect(reference.branches).toEqual(["Limit", "Limit"]);
    expect(reference.indexes).toEqual(["transactions_reference_idx", "transactions_client_reference_listing_idx"]);
  });
});
