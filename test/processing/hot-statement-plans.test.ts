import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql as query } from "drizzle-orm";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { cte } from "../../src/db/cte.ts";
import { queryRows } from "../../src/db/rows.ts";
import * as schema from "../../src/db/schema/index.ts";
import type { Executor } from "../../src/db/transaction.ts";
import { settleEach } from "../../src/ledger/movements.ts";
import { runAcceptStatement } from "../../src/orders/statements/accept.ts";
import { claimDueTransactions } from "../../src/orders/statements/claim-due.ts";
import { runCompleteStatement } from "../../src/orders/statements/complete.ts";
import { markPending } from "../../src/orders/statements/mark-pending.ts";
import { insertBulkTransactions } from "../helpers/bulk-transactions.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";

// Plans are PostgreSQL's: the embedded engine is not what runs at scale.
const onPostgres = Boolean(process.env.DATABASE_URL);

type PlanNode = {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Plan Rows": number;
  Plans?: PlanNode[];
};
const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

let database: TestDatabase;
let sql: postgres.Sql;

/**
 * The GENERIC plan of the (first) statement `run` sends (the one a prepared statement settles on after five runs, planned
 * without its values: every JSON input is guessed at 100 rows), from `PREPARE` and `EXPLAIN EXECUTE` under
 * `plan_cache_mode = force_generic_plan`.
 */
async function genericPlanOf(run: (db: Executor) => Promise<unknown>): Promise<PlanNode[]> {
  const logged: { query: string; params: unknown[] }[] = [];
  await run(drizzle(sql, { schema, logger: { logQuery: (query, params) => logged.push({ query, params }) } }));
  const [statement] = logged;
  if (!statement) throw new Error("no statement was sent");
  await sql.unsafe("deallocate all");
  // Each value typed as the driver sends it (text, or a number); the statement casts what it needs.
  const types = statement.params.map((value) =>
    typeof value !== "number" ? "text" : Number.isInteger(value) ? "int" : "float8",
  );
  await sql.unsafe(`prepare hot (${types.join(", ")}) as ${statement.query}`).simple();
  // A utility statement's parameters are not typed by the server, so the values go in as literals.
  const literal = (value: unknown) => (typeof value === "number" ? String(value) : `'${String(value).replaceAll("'", "''")}'`);
  const [row] = await sql.unsafe(`explain (format json) execute hot(${statement.params.map(literal).join(", ")})`).simple();
  const [explained] = (row?.["QUERY PLAN"] ?? []) as { Plan: PlanNode }[];
  if (!explained) throw new Error("no plan");
  return nodesOf(explained.Plan);
}

/** The row estimate of each change the statement makes (a table updated, inserted into, deleted from). */
const changesOf = (plan: PlanNode[]) =>
  plan.filter((node) => node["Node Type"] === "ModifyTable").map((node) => [node["Relation Name"], node["Plan Rows"]]);

const seqScansOf = (plan: PlanNode[]) =>
  plan.filter((node) => node["Node Type"] === "Seq Scan").map((node) => node["Relation Name"]);

// Each size on a database of its own: a generic plan is made once, on the sizes the tables have then, and kept
// as they grow (where autovacuum is off nothing makes a new one), so every size must plan reads by key.
describe.skipIf(!onPostgres)("hot statements under their generic plans, tables never analyzed (PostgreSQL)", () => {
  for (const size of [0, 300, 5_000])
    describe(`400 wallets and ${size} orders`, () => {
      beforeAll(async () => {
        database = await createTestDatabase({ maxConnections: 1 });
        sql = postgres(database.url ?? "", {
          max: 1,
          onnotice: () => {},
          connection: { plan_cache_mode: "force_generic_plan" },
        });
        // The shape the worker-cost bench found it in: a few hundred wallets, no statistics (autovacuum off).
        await sql`insert into accounts (name) select 'account ' || n from generate_series(1, 200) n`;
        await sql`insert into wallets (account_id, mode) select a.id, m.mode from accounts a
              cross join (values ('test'), ('live')) m(mode) on conflict do nothing`;
        const [account] = await sql<{ id: string }[]>`select id from accounts limit 1`;
        await insertBulkTransactions(sql, account?.id ?? "", size);
        await sql`insert into provider_attempts (transaction_id, provider, request_id, status, cost_kobo)
              select id, provider, reference, 'successful', 0 from transactions`;
        // A backlog: every order queued (the queue is small at rest, but not while the workers catch up).
        await sql`insert into transaction_queue (transaction_id, created_at, due_at) select id, created_at, created_at from transactions`;
        await sql`insert into idempotency_records (scope, method, path, key, fingerprint, response_status, response_body, expires_at)
              select account_id::text, 'POST', '/api/v1/vend', reference, 'f', 202, '{}', now() + interval '1 day' from transactions`;
      }, 60_000);
      afterAll(async () => {
        await sql?.end({ timeout: 5 });
        await database?.drop();
      });

      /** Tables that grow with the orders (the queue with a backlog; `webhook_endpoints` is a few per account). */
      const growing = [
        "transactions",
        "transaction_queue",
        "ledger_entries",
        "events",
        "provider_attempts",
        "wallets",
        "idempotency_records",
      ];

      /**
       * Each change planned for about one order (see plannedForOne), so nothing later in the statement is planned
       * as a join over many: planned for ~20 (an update by id alone, on a never-analyzed table), the completion
       * hash-joined every attempt ever made, on every completion (bench/worker-cost.ts: 1,334 to 4,322 tuples read
       * per vend, growing round over round).
       */
      const expectPlannedForOne = (plan: PlanNode[]) => {
        for (const [table, rows] of changesOf(plan))
          expect({ table, rows: Math.max(Number(rows), 1) }).toEqual({ table, rows: 1 });
      };

      /** Every wallet the plan reads is read through one of its indexes (the update's own node names none). */
      const expectWalletsByIndex = (plan: PlanNode[]) => {
        expect(seqScansOf(plan)).not.toContain("wallets");
        const reads = plan.filter((node) => node["Relation Name"] === "wallets" && node["Node Type"] !== "ModifyTable");
        expect(reads.length).toBeGreaterThan(0);
        for (const node of reads) expect(["wallets_pkey", "wallets_account_mode_idx"]).toContain(node["Index Name"] ?? "");
      };

      test("settling orders locks each wallet by its index, whatever number of orders the planner guesses", async () => {
        // A source the planner guesses at 100 orders (any JSON input is), against 400 wallets: before, the wallets
        // were locked through a hash join over a seq scan of every wallet (~400 tuples read per completion in
        // bench/worker-cost.ts at 100 vends/s, autovacuum off).
        const txn = cte("txn", ["id", "account_id", "mode", "price_kobo", "status", "ord", "note"]);
        const settle = settleEach(txn);
        const plan = await genericPlanOf((db) =>
          queryRows(
            db,
            query`with ${txn.name} as materialized (
          select * from json_to_recordset(${"[]"}::json)
            as i(id uuid, account_id uuid, mode text, price_kobo bigint, status text, ord int, note text)
        ), ${settle.wallet}, ${settle.entry} select count(*) from settled_entries`,
          ),
        );
        expectWalletsByIndex(plan);
      });

      test("the completion reads no table that grows with the orders by a seq scan", async () => {
        // One order that does not exist: the statement changes nothing (its guard finds no row) and is logged once.
        const order = {
          ord: 1,
          id: crypto.randomUUID(),
          from_status: "processing",
          from_updated_at: new Date().toISOString(),
          lease_owner: null,
          attempts: null,
          status: "successful" as const,
          metadata: {},
          provider_reference: null,
          failure_reason: null,
          note: null,
          event_id: "evt_plan",
          event_type: "transaction.successful",
          payload: {},
          announcement: "{}",
          chunk: 1,
          answer_status: "success",
          answer_message: null,
          answer_ms: null,
          answer_provider: null,
        };
        const plan = await genericPlanOf((db) => runCompleteStatement(db, { orders: [order], token: "@@now@@" }));
        expectWalletsByIndex(plan);
        // Nor any other table that grows with the orders.
        for (const table of growing) expect(seqScansOf(plan)).not.toContain(table);
        expectPlannedForOne(plan);
      });

      test("the claim and the accept read no table that grows with the orders by a seq scan", async () => {
        const claim = await genericPlanOf((db) => claimDueTransactions(db, "worker-plan", 10, 30));
        const accept = await genericPlanOf((db) => runAcceptStatement(db, []));
        for (const table of growing) {
          expect(seqScansOf(claim)).not.toContain(table);
          expect(seqScansOf(accept)).not.toContain(table);
        }
        expectPlannedForOne(claim);
        expectPlannedForOne(accept);
      });

      test("a move to pending reads no table that grows with the orders by a seq scan", async () => {
        // No such order: nothing changes (the statement is followed by a read that finds none, and throws).
        const plan = await genericPlanOf((db) =>
          markPending(db, crypto.randomUUID(), { afterSeconds: 30 }, undefined, undefined, { status: "pending" }).catch(
            () => undefined,
          ),
        );
        for (const table of growing) expect(seqScansOf(plan)).not.toContain(table);
        expectPlannedForOne(plan);
      });

      test("the claim settles on one plan per connection instead of being planned for every claim", async () => {
        // On the pool's one connection, as the worker sends it: a named prepared statement, its size changing.
        const { db } = database.handle;
        for (let limit = 1; limit <= 12; limit++) await claimDueTransactions(db, "worker-plan-cache", limit, 30);
        const [plans] = await queryRows<{ generic_plans: number; custom_plans: number }>(
          db,
          query`select generic_plans::int, custom_plans::int from pg_prepared_statements
              where statement like ${"/* orders.claim_due */%"}`,
        );
        // Five custom plans, then the generic one kept. Before: twelve custom plans (the size was a parameter the
        // planner used, so a plan for it always looked cheaper): 0.6 ms of planning per claim at 100 vends/s.
        expect(plans).toEqual({ custom_plans: 5, generic_plans: 7 });
      });
    });
});
