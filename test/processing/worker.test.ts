import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { processingRunner } from "../../src/background.ts";
import { ledgerEntries, sandboxOrders } from "../../src/db/schema/index.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { completeTransaction } from "../../src/orders/completion.ts";
import { toProviderOrder } from "../../src/orders/processing.ts";
import { claimDueTransactions } from "../../src/orders/statements/claim-due.ts";
import { markPending } from "../../src/orders/statements/mark-pending.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { expireLease as expireLeaseOf, fastProcessing, transactionRow, vendAirtime } from "../helpers/processing.ts";
import { changeTransactions } from "../helpers/queue.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let client: HttpClient;

beforeAll(async () => {
  server = await startTestServer(fastProcessing());
  client = (await fundedAccount(server, 50_000_000)).client;
});
afterAll(() => server.close());

const workerDeps = () => ({ ...server.deps, apiBaseUrl: server.url });
const db = () => server.database.handle.db;

const vend = (phone?: string) => vendAirtime(client, phone);
const row = (reference: string) => transactionRow(db(), reference);
const expireLease = (reference: string) => expireLeaseOf(db(), reference);

describe("transitions are guarded in one place", () => {
  test("a transition from a state it may not leave changes nothing", async () => {
    const reference = await vend();
    const queued = await row(reference);
    expect((await completeTransaction(db(), queued.id, { status: "successful" })).changed).toBe(false);
    await processingRunner(workerDeps(), "w-guard").tick();
    const done = await row(reference);
    expect(done.status).toBe("successful");
    const again = await completeTransaction(db(), done.id, { status: "failed", reason: "late", failureCode: "not_delivered" });
    expect(again).toMatchObject({ changed: false });
    expect(again.row.status).toBe("successful");
    expect((await markPending(db(), done.id, { afterSeconds: 0 })).changed).toBe(false);
    const entries = await db().select().from(ledgerEntries).where(eq(ledgerEntries.transactionId, done.id));
    expect(entries.map((e) => e.kind).sort()).toEqual(["capture", "hold"]);
  });
});

describe("a worker that dies mid-job", () => {
  test("after the provider took the order: the next worker re-queries and completes it without resending", async () => {
    const reference = await vend();
    const [claim] = await claimDueTransactions(db(), "w-dead", 1, 30);
    expect(claim?.reference).toBe(reference);
    const order = await toProviderOrder(server.deps, await row(reference));
    await server.deps.providers.get("sandbox")?.vend(order);
    await expireLease(reference);
    await processingRunner(workerDeps(), "w-next").tick();
    expect((await row(reference)).status).toBe("successful");
    const [booked] = await db().select().from(sandboxOrders).where(eq(sandboxOrders.reference, reference));
    expect(booked?.vendCount).toBe(1);
  });

  test("before the provider saw it: the next worker re-queries, finds nothing, and vends once", async () => {
    const reference = await vend();
    await claimDueTransactions(db(), "w-dead", 1, 30);
    await expireLease(reference);
    await processingRunner(workerDeps(), "w-next").tick();
    expect((await row(reference)).status).toBe("successful");
    const [booked] = await db().select().from(sandboxOrders).where(eq(sandboxOrders.reference, reference));
    expect(booked?.vendCount).toBe(1);
  });

  test("a leased job is not taken by another worker until its lease expires", async () => {
    const reference = await vend();
    await claimDueTransactions(db(), "w-holder", 1, 30);
    expect(await claimDueTransactions(db(), "w-other", 10, 30)).toEqual([]);
    await expireLease(reference);
    const [retaken] = await claimDueTransactions(db(), "w-other", 10, 30);
    expect(retaken).toMatchObject({ reference, previousStatus: "processing", attempts: 2 });
    await processingRunner(workerDeps(), "w-other").tick();
  });
});

describe("re-query of pending transactions", () => {
  test("5555: the provider error leaves it pending with a re-query time; the re-query completes it", async () => {
    const reference = await vend("08031235555");
    await processingRunner(workerDeps(), "w-1").tick();
    const pending = await row(reference);
    expect(pending.status).toBe("pending");
    expect(pending.nextAttemptAt?.getTime()).toBeGreaterThan(Date.now());
    await changeTransactions(db(), sql`update transactions set next_attempt_at = now() where reference = ${reference}`);
    await processingRunner(workerDeps(), "w-2").tick();
    expect((await row(reference)).status).toBe("successful");
  });
});

describe("many workers", () => {
  test("concurrent ticks share the work: each transaction processed once", async () => {
    const references = await Promise.all(Array.from({ length: 30 }, () => vend()));
    await Promise.all([1, 2, 3].map((n) => processingRunner(workerDeps(), `w-${n}`).tick({ limit: 10 })));
    while ((await processingRunner(workerDeps(), "w-sweep").tick({ limit: 10 })) > 0) {}
    for (const reference of references) expect((await row(reference)).status).toBe("successful");
    const booked = await db().select().from(sandboxOrders);
    expect(booked.filter((b) => references.includes(b.reference)).every((b) => b.vendCount === 1)).toBe(true);
    expect(await reconcileWallets(db())).toEqual([]);
  });

  test("the loop stops on abort and gives back its leases", async () => {
    const worker = processingRunner(workerDeps(), "w-loop");
    worker.start();
    const reference = await vend();
    server.deps.announceWork();
    const waited = await client.get(`/api/v1/transactions/${reference}`, { query: { wait: 5 } });
    expect(waited.json.data.status).toBe("successful");
    await worker.stop();
    const held = await db().execute(
      sql`select count(*)::int as n from transactions where lease_owner = 'w-loop' and lease_expires_at > now()`,
    );
    const rows = (Array.isArray(held) ? held : (held as { rows: { n: number }[] }).rows) as { n: number }[];
    expect(Number(rows[0]?.n)).toBe(0);
  });
});
