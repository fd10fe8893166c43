import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { processingRunner } from "../../src/background.ts";
import { createRunner } from "../../src/jobs/runner.ts";
import { retentionTask } from "../../src/jobs/tasks/retention.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { loadConfig } from "../../src/load-config.ts";
import { deleteBatch } from "../../src/retention/delete-batch.ts";
import { type RetentionDeps, runRetentionPass } from "../../src/retention/pass.ts";
import { type RetentionKind, type RetentionSettings, retentionKinds } from "../../src/retention/retention-settings.ts";
import { retentionStatements } from "../../src/roles/retention-statements.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let client: HttpClient;
let accountId: string;
let endpointId: string;
const db = () => server.database.handle.db;

const settings = (days: Partial<Record<RetentionKind, number>>, batchRows = 1000): RetentionSettings => ({
  days: { ...(Object.fromEntries(retentionKinds.map((kind) => [kind, 0])) as Record<RetentionKind, number>), ...days },
  batchRows,
  passSeconds: 60,
});
/** The defaults, read from an empty environment: what a pass does unless the operator sets otherwise. */
const defaults = loadConfig({}).retention;
const deps = (retention: RetentionSettings): RetentionDeps => ({ ...server.deps, config: { retention } });

/** One pass through the real task on a runner of its own, as every worker process runs it; the rows deleted. */
const tick = (retention: RetentionSettings) =>
  createRunner(server.deps, { queues: [], tasks: [retentionTask(deps(retention), retentionStatements)], pollMs: 1000 }).tick();

const ago = (days: number) => sql`now() - make_interval(days => ${days}::int)`;
const count = async (query: ReturnType<typeof sql>) => Number((await rows<{ n: number }>(query))[0]?.n);
async function rows<T>(query: ReturnType<typeof sql>): Promise<T[]> {
  const result = (await db().execute(query)) as unknown as { rows?: T[] } | T[];
  return Array.isArray(result) ? result : (result.rows ?? []);
}
const ids = async (table: string, column = "id") =>
  (await rows<{ id: string }>(sql`select ${sql.raw(column)}::text as id from ${sql.raw(table)} order by 1`)).map((r) => r.id);

/** Every table of money history, counted: a pass never changes these. */
const moneyTables = ["transactions", "ledger_entries", "provider_attempts", "audit_entries", "vend_batches", "wallets"];
const moneyCounts = async () =>
  Object.fromEntries(
    await Promise.all(moneyTables.map(async (t) => [t, await count(sql`select count(*)::int as n from ${sql.raw(t)}`)])),
  );

/** The process's `vend_retention_deleted_rows_total` for `table`, as scraped. */
async function deletedCounter(table: string): Promise<number> {
  const line = (await server.deps.metrics.scrape())
    .split("\n")
    .find((l) => l.startsWith(`vend_retention_deleted_rows_total{table="${table}"}`));
  return Number(line?.split(" ")[1] ?? 0);
}

async function vend(phone: string): Promise<string> {
  const res = await client.post(
    "/api/v1/vend",
    { product_code: "mtn-airtime", phone_number: phone, amount_kobo: 10_000 },
    idem(),
  );
  expect(res.status).toBe(202);
  return res.json.data.reference;
}

/** An event (and one delivery to the endpoint in `status`, last changed `deliveryDays` ago, with one attempt `attemptDays` ago). */
async function seedEvent(
  id: string,
  eventDays: number,
  delivery?: { status: "pending" | "succeeded" | "failed"; days: number; attemptDays: number },
) {
  await db().execute(sql`insert into events (id, account_id, mode, type, payload, created_at)
    select ${id}, ${accountId}::uuid, 'test', 'transaction.successful', payload, ${ago(eventDays)}
    from events where type = 'transaction.successful' limit 1`);
  if (!delivery) return;
  const [row] = await rows<{
    id: string;
  }>(sql`insert into webhook_deliveries (event_id, endpoint_id, status, attempts, created_at, updated_at)
    values (${id}, ${endpointId}::uuid, ${delivery.status}, 1, ${ago(eventDays)}, ${ago(delivery.days)}) returning id::text as id`);
  await db().execute(sql`insert into webhook_attempts (delivery_id, attempt, status_code, duration_ms, attempted_at)
    values (${row?.id}::uuid, 1, 200, 5, ${ago(delivery.attemptDays)})`);
}

const seededReferences: Record<string, string> = {};

beforeAll(async () => {
  server = await startTestServer(fastProcessing());
  const account = await fundedAccount(server, 1_000_000);
  client = account.client;
  accountId = account.id;
  const endpoint = await client.post("/api/v1/webhook-endpoints", { url: "http://127.0.0.1:9/hooks" });
  expect(endpoint.status).toBe(201);
  endpointId = endpoint.json.data.id;
  // Real orders with the sandbox: two successful (one to be made old), one left pending (its order stays open).
  seededReferences.oldFinal = await vend("08031230001");
  seededReferences.newFinal = await vend("08031230002");
  seededReferences.oldPending = await vend("08031234444");
  const worker = processingRunner({ ...server.deps, apiBaseUrl: server.url }, "retention-worker");
  for (let n = 0; n < 5; n++) await worker.tick();
  const statuses = await rows<{ reference: string; status: string }>(
    sql`select reference, status from transactions order by reference`,
  );
  expect(Object.fromEntries(statuses.map((r) => [r.reference, r.status]))).toEqual({
    [seededReferences.oldFinal]: "successful",
    [seededReferences.newFinal]: "successful",
    [seededReferences.oldPending]: "pending",
  });
  // Age the orders (and their money history) past every setting: age alone must not get money deleted.
  for (const key of ["oldFinal", "oldPending"]) {
    const reference = seededReferences[key] ?? "";
    await db().execute(sql`update sandbox_orders set created_at = ${ago(400)} where reference = ${reference}`);
    await db().execute(
      sql`update transactions set created_at = ${ago(400)}, updated_at = ${ago(400)} where reference = ${reference}`,
    );
    await db().execute(sql`update ledger_entries set created_at = ${ago(400)}
      where transaction_id = (select id from transactions where reference = ${reference})`);
    await db().execute(sql`update provider_attempts set sent_at = ${ago(400)}
      where transaction_id = (select id from transactions where reference = ${reference})`);
  }
  // The webhook side: the real orders' events are new; these are the old and the kept.
  await seedEvent("evt_old_delivered", 400, { status: "succeeded", days: 400, attemptDays: 400 });
  await seedEvent("evt_old_failed", 400, { status: "failed", days: 400, attemptDays: 400 });
  await seedEvent("evt_failed_60d", 400, { status: "failed", days: 60, attemptDays: 60 });
  await seedEvent("evt_old_pending", 400, { status: "pending", days: 400, attemptDays: 400 });
  await seedEvent("evt_old_no_delivery", 400);
  await seedEvent("evt_new_delivered", 1, { status: "succeeded", days: 1, attemptDays: 1 });
  for (const [id, days] of [
    ["00000000-0000-7000-8000-000000000001", 400],
    ["00000000-0000-7000-8000-000000000002", 1],
  ] as const) {
    await db().execute(sql`insert into provider_callbacks (id, provider, reference, headers, raw_body, signature_valid, http_status, result_code, received_at)
      values (${id}::uuid, 'sandbox', 'ref', '{}'::jsonb, '{}', true, 200, 'applied', ${ago(days)})`);
  }
  for (const [id, kind, days] of [
    ["00000000-0000-7000-8000-00000000000a", "low_balance", 400],
    ["00000000-0000-7000-8000-00000000000b", "double_delivery", 400],
    ["00000000-0000-7000-8000-00000000000c", "low_balance", 1],
  ] as const) {
    await db().execute(sql`insert into provider_anomalies (id, kind, provider, reference, message, created_at)
      values (${id}::uuid, ${kind}, 'sandbox', ${kind === "double_delivery" ? seededReferences.oldFinal : null}, 'seeded', ${ago(days)})`);
  }
  // Request logs: one recorded 8 days ago (past the default 7), one yesterday; the requests above are recorded now.
  for (const [requestId, days] of [
    ["req_seeded_old", 8],
    ["req_seeded_new", 1],
  ] as const) {
    await db().execute(sql`insert into request_logs (created_at, request_id, method, route, path, status, duration_ms)
      values (${ago(days)}, ${requestId}, 'GET', '/api/v1/wallet', '/api/v1/wallet', 200, 1)`);
  }
});
afterAll(async () => {
  await server?.close();
});

describe("retention", () => {
  test("settings of 0 keep everything, however old", async () => {
    const tables = [
      "events",
      "webhook_deliveries",
      "webhook_attempts",
      "provider_callbacks",
      "sandbox_orders",
      "provider_anomalies",
    ];
    const before = await Promise.all(tables.map((t) => ids(t, t === "sandbox_orders" ? "reference" : "id")));
    expect(await tick(settings({}))).toBe(0);
    expect(await Promise.all(tables.map((t) => ids(t, t === "sandbox_orders" ? "reference" : "id")))).toEqual(before);
  });

  test("a pass with the default settings deletes only the old operational rows; money history and open work stay", async () => {
    // The records of this file's requests are written before the pass, so it meets them.
    await server.deps.requestLogs.flush();
    const money = await moneyCounts();
    const eventsBefore = await ids("events");
    const pass = await runRetentionPass(deps(defaults), retentionStatements);
    expect(pass.unfinished).toBe(false);
    // Attempts: the old ones (400 and 60 days, also of the pending delivery), and those of the deleted deliveries.
    expect(pass.deleted).toEqual({
      webhook_attempts: 4,
      webhook_deliveries: 2,
      provider_callbacks: 1,
      sandbox_orders: 1,
      provider_anomalies: 1,
      request_logs: 1,
    });
    const deliveries = await rows<{ event_id: string; status: string }>(
      sql`select event_id, status from webhook_deliveries
        where event_id in ('evt_old_delivered', 'evt_old_failed', 'evt_failed_60d', 'evt_old_pending', 'evt_new_delivered')
        order by event_id`,
    );
    expect(deliveries).toEqual([
      { event_id: "evt_failed_60d", status: "failed" },
      { event_id: "evt_new_delivered", status: "succeeded" },
      { event_id: "evt_old_pending", status: "pending" },
    ]);
    expect(await count(sql`select count(*)::int as n from webhook_attempts where attempted_at < ${ago(30)}`)).toBe(0);
    expect(await count(sql`select count(*)::int as n from webhook_attempts where attempted_at > ${ago(2)}`)).toBeGreaterThan(0);
    // Delivered events are kept by default (GET /api/v1/events lists them).
    expect(await ids("events")).toEqual(eventsBefore);
    // The sandbox order of the old final order went; the open (pending) one and the new one stay.
    expect(await ids("sandbox_orders", "reference")).toEqual(
      [seededReferences.newFinal ?? "", seededReferences.oldPending ?? ""].sort(),
    );
    expect(await ids("provider_callbacks")).toEqual(["00000000-0000-7000-8000-000000000002"]);
    expect(await ids("provider_anomalies")).toEqual([
      "00000000-0000-7000-8000-00000000000b",
      "00000000-0000-7000-8000-00000000000c",
    ]);
    // The request log: the 8-day-old record went; yesterday's and the records of this file's requests stay.
    expect(await ids("request_logs", "request_id")).not.toContain("req_seeded_old");
    expect(await ids("request_logs", "request_id")).toContain("req_seeded_new");
    expect(await count(sql`select count(*)::int as n from request_logs where route = '/api/v1/vend'`)).toBe(3);
    // Nothing of the money moved or went: same rows, and every wallet still equals the sum of its ledger.
    expect(await moneyCounts()).toEqual(money);
    expect(await reconcileWallets(db())).toEqual([]);
    const read = await client.get(`/api/v1/transactions/${seededReferences.oldFinal}`);
    expect(read.json.data.status).toBe("successful");
    // A second pass finds nothing more.
    expect(await tick(defaults)).toBe(0);
  });

  test("delivered events go when their setting allows, with their final deliveries; an event still to deliver stays", async () => {
    const money = await moneyCounts();
    const deleted = await tick(settings({ deliveredEvents: 60 }));
    const left = await ids("events");
    for (const gone of ["evt_old_delivered", "evt_old_failed", "evt_failed_60d", "evt_old_no_delivery"])
      expect(left).not.toContain(gone);
    expect(left).toContain("evt_old_pending");
    expect(left).toContain("evt_new_delivered");
    // The 60-day failed delivery (kept by its own setting) went with its event: 4 events + 1 delivery.
    expect(deleted).toBe(5);
    expect(await count(sql`select count(*)::int as n from webhook_deliveries where event_id = 'evt_old_pending'`)).toBe(1);
    expect(await moneyCounts()).toEqual(money);
    expect(await reconcileWallets(db())).toEqual([]);
    const listed = await client.get("/api/v1/events?limit=100");
    expect(listed.status).toBe(200);
    expect(listed.json.data.items.map((event: { id: string }) => event.id).sort()).toEqual([...left].sort());
  });

  test("more rows than one batch: one statement deletes a batch, a pass deletes them all, in batches", async () => {
    await db().execute(sql`insert into provider_callbacks (provider, reference, headers, raw_body, signature_valid, http_status, result_code, received_at)
      select 'sandbox', 'bulk-' || n, '{}'::jsonb, '{}', true, 200, 'applied', now() - interval '100 days' - n * interval '1 second'
      from generate_series(1, 2500) n`);
    const kept = (await count(sql`select count(*)::int as n from provider_callbacks`)) - 2500;
    const counted = await deletedCounter("provider_callbacks");
    const one = await deleteBatch(db(), retentionStatements.providerCallbacks, 30, 1000);
    expect(one.main).toBe(1000);
    const pass = await runRetentionPass(deps(settings({ providerCallbacks: 30 }, 1000)), retentionStatements);
    // 1,500 left: a full batch, then 500 (less than a batch: done).
    expect(pass).toMatchObject({ deleted: { provider_callbacks: 1500 }, statements: 2, unfinished: false });
    expect(await count(sql`select count(*)::int as n from provider_callbacks`)).toBe(kept);
    expect(await deletedCounter("provider_callbacks")).toBe(counted + 1500);
  });

  test("passes of several processes at once share the rows: each deleted once, none left, no error", async () => {
    await db().execute(sql`insert into provider_callbacks (provider, reference, headers, raw_body, signature_valid, http_status, result_code, received_at)
      select 'sandbox', 'shared-' || n, '{}'::jsonb, '{}', true, 200, 'applied', now() - interval '100 days' - n * interval '1 ms'
      from generate_series(1, 3000) n`);
    const retention = settings({ providerCallbacks: 30 }, 250);
    const passes = await Promise.all([1, 2, 3].map(() => runRetentionPass(deps(retention), retentionStatements)));
    expect(passes.reduce((sum, pass) => sum + (pass.deleted.provider_callbacks ?? 0), 0)).toBe(3000);
    expect(await count(sql`select count(*)::int as n from provider_callbacks where reference like 'shared-%'`)).toBe(0);
  });

  test("a pass starts no statement past its time bound; the next pass goes on", async () => {
    await db().execute(sql`insert into provider_callbacks (provider, reference, headers, raw_body, signature_valid, http_status, result_code, received_at)
      select 'sandbox', 'late-' || n, '{}'::jsonb, '{}', true, 200, 'applied', now() - interval '100 days' from generate_series(1, 30) n`);
    let clock = 0;
    // Each reading of the clock is 20 s later: the first statement starts, the second would start past 60 s.
    const pass = await runRetentionPass(deps(settings({ providerCallbacks: 30 }, 10)), retentionStatements, () => {
      clock += 20_000;
      return clock;
    });
    expect(pass).toMatchObject({ deleted: { provider_callbacks: 10 }, statements: 1, unfinished: true });
    expect(await tick(settings({ providerCallbacks: 30 }, 10))).toBe(20);
  });
});

describe("retention settings", () => {
  test.each([
    ["RETENTION_WEBHOOK_ATTEMPTS_DAYS", "-1"],
    ["RETENTION_WEBHOOK_DELIVERIES_DAYS", "thirty"],
    ["RETENTION_BATCH_ROWS", "0"],
    ["RETENTION_PASS_SECONDS", "999999"],
  ])("%s=%s is refused, naming the variable", (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  test("defaults: operational rows kept for weeks, delivered events for ever (0)", () => {
    expect(defaults).toEqual({
      days: {
        webhookAttempts: 30,
        deliveredWebhooks: 30,
        failedWebhooks: 90,
        deliveredEvents: 0,
        providerCallbacks: 90,
        sandboxOrders: 7,
        lowBalanceAnomalies: 90,
        requestLogs: 7,
      },
      batchRows: 1000,
      passSeconds: 60,
    });
    expect(loadConfig({ RETENTION_SANDBOX_ORDERS_DAYS: "0" }).retention.days.sandboxOrders).toBe(0);
    expect(loadConfig({ RETENTION_REQUEST_LOGS_DAYS: "30" }).retention.days.requestLogs).toBe(30);
  });
});
