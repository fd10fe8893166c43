import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { delay, HttpResponse, http } from "msw";
import { processingRunner } from "../../src/background.ts";
import { ledgerEntries, sandboxOrders } from "../../src/db/schema/index.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { loadConfig } from "../../src/load-config.ts";
import { startLeaseKeeper } from "../../src/orders/leases.ts";
import { processClaimed } from "../../src/orders/processing.ts";
import { claimDueTransactions } from "../../src/orders/statements/claim-due.ts";
import type { ProviderAdapter } from "../../src/providers/types.ts";
import { createVtuProvider } from "../../src/providers/vtu/client.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { childEnv, spawnProcess } from "../helpers/process.ts";
import { expireLease as expireLeaseOf, fastProcessing, transactionRow, vendAirtime } from "../helpers/processing.ts";
import { changeTransactions } from "../helpers/queue.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { setupMockFetch, VtuBook, type VtuPayBody, vtuAnswer, vtuTestConfig } from "../helpers/vtu-mock.ts";

// A provider slower than the lease: it answers a pay after 5 s and only then has the order on its books
// (a re-query meanwhile answers "not found"). The lease is 2 s; the provider timeout (8 s) is longer.
const slowVtu = { ...vtuTestConfig, timeoutMs: 8000 };
const payAnswerMs = 5000;
const network = setupMockFetch({ onUnhandledFrame: "bypass" });
const book = new VtuBook();
let server: TestServer;
let live: HttpClient;
let sandbox: HttpClient;

beforeAll(async () => {
  network.enable();
  network.use(
    http.post(`${slowVtu.baseUrl}/api/pay`, async ({ request }) => {
      const body = (await request.json()) as VtuPayBody;
      book.requests.push({ path: "pay", headers: {}, body });
      await delay(payAnswerMs);
      // Every pay that arrives is carried out: a second pay for one order is a second purchase.
      return HttpResponse.json(vtuAnswer(book.record(body, "delivered")));
    }),
    http.post(`${slowVtu.baseUrl}/api/requery`, async ({ request }) => {
      const body = (await request.json()) as { request_id: string };
      book.requests.push({ path: "requery", headers: {}, body });
      return HttpResponse.json(book.answer(body.request_id) ?? { code: "015", response_description: "INVALID REQUEST ID" });
    }),
  );
  const worker = { ...loadConfig({}).worker, pollMs: 50, leaseSeconds: 2, requerySchedule: [0.2] };
  server = await startTestServer(fastProcessing({ providers: { vtu: slowVtu }, worker }), {
    liveProviders: [createVtuProvider(slowVtu)],
  });
  const account = await server.createAccount("Slow Co");
  await server.admin.post(
    `/admin/v1/accounts/${account.id}/wallet/credit`,
    { mode: "live", amount_kobo: 10_000_000, note: "float" },
    idem(),
  );
  live = server.client(account.liveKey);
  sandbox = (await fundedAccount(server, 10_000_000, "Sandbox Co")).client;
});
afterAll(async () => {
  await server.close();
  network.disable();
});

const db = () => server.database.handle.db;
const workerDeps = () => ({ ...server.deps, apiBaseUrl: server.url });

const vend = vendAirtime;
const row = (reference: string) => transactionRow(db(), reference);
const expireLease = (reference: string) => expireLeaseOf(db(), reference);

async function settlements(transactionId: string): Promise<string[]> {
  const entries = await db().select().from(ledgerEntries).where(eq(ledgerEntries.transactionId, transactionId));
  return entries.map((e) => e.kind).sort();
}

async function sandboxVends(reference: string): Promise<number> {
  const [order] = await db().select().from(sandboxOrders).where(eq(sandboxOrders.reference, reference));
  return order?.vendCount ?? 0;
}

describe("a provider slower than the lease", () => {
  test("two workers racing: each order reaches the provider once, is final once, wallets reconcile", async () => {
    const references = [await vend(live), await vend(live)];
    const workers = [processingRunner(workerDeps(), "w-race-a"), processingRunner(workerDeps(), "w-race-b")];
    for (const worker of workers) worker.start();
    server.deps.announceWork();
    for (const reference of references) {
      const waited = await live.get(`/api/v1/transactions/${reference}`, { query: { wait: 10 } });
      expect(waited.json.data.status).toBe("successful");
    }
    await Promise.all(workers.map((w) => w.stop()));
    for (const reference of references) {
      // The money proof: one pay per order at the provider, one capture in our ledger.
      const pays = book.requestsTo("pay").filter((r) => (r.body as VtuPayBody).request_id === reference);
      expect(pays).toHaveLength(1);
      expect(await settlements((await row(reference)).id)).toEqual(["capture", "hold"]);
    }
    expect(await reconcileWallets(db())).toEqual([]);
  }, 30_000);
});

describe("a worker whose lease was taken over", () => {
  test("cannot complete: its completion changes nothing; one settlement only", async () => {
    const reference = await vend(sandbox);
    const [old] = await claimDueTransactions(db(), "w-old", 1, 30);
    expect(old?.reference).toBe(reference);
    await expireLease(reference);
    const [taken] = await claimDueTransactions(db(), "w-new", 1, 30);
    expect(taken?.reference).toBe(reference);
    if (!old || !taken) throw new Error("not claimed");

    const late = await processClaimed(server.deps, old);
    expect(late.changed).toBe(false);
    expect(await row(reference)).toMatchObject({ status: "processing", leaseOwner: "w-new" });

    const owner = await processClaimed(server.deps, taken);
    expect(owner).toMatchObject({ changed: true, row: { status: "successful" } });
    // The new owner re-queried and found the old worker's order: one vend, one capture.
    expect(await sandboxVends(reference)).toBe(1);
    expect(await settlements(taken.id)).toEqual(["capture", "hold"]);
    expect(await reconcileWallets(db())).toEqual([]);
  });

  test("cannot mark it pending (or move its re-query time)", async () => {
    const reference = await vend(sandbox, "08031234444");
    const [old] = await claimDueTransactions(db(), "w-old", 1, 30);
    await expireLease(reference);
    const [taken] = await claimDueTransactions(db(), "w-new", 1, 30);
    if (!old || !taken) throw new Error("not claimed");
    const before = await row(reference);

    const late = await processClaimed(server.deps, old);
    expect(late.changed).toBe(false);
    const after = await row(reference);
    expect(after).toMatchObject({ status: "processing", leaseOwner: "w-new" });
    expect(after.leaseExpiresAt).toEqual(before.leaseExpiresAt);
    expect(after.nextAttemptAt).toEqual(before.nextAttemptAt);

    expect(await processClaimed(server.deps, taken)).toMatchObject({ changed: true, row: { status: "pending" } });
    expect(await sandboxVends(reference)).toBe(1);
  });

  test("that finds out while re-querying does not send the order again", async () => {
    const reference = await vend(sandbox);
    // A first worker claimed it and died before it reached the provider.
    await claimDueTransactions(db(), "w-dead", 1, 30);
    await expireLease(reference);
    const [retake] = await claimDueTransactions(db(), "w-slow", 1, 30);
    if (!retake) throw new Error("not claimed");

    // The sandbox, with a re-query that answers only when the test lets it.
    const real = server.deps.providers.get("sandbox");
    if (!real) throw new Error("no sandbox");
    let entered: () => void = () => {};
    const requeryEntered = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const gated: ProviderAdapter = {
      ...real,
      async requery(order) {
        entered();
        await gate;
        return real.requery(order);
      },
    };
    const providers = { ...server.deps.providers, get: (name: string) => (name === "sandbox" ? gated : undefined) };
    const slow = processClaimed({ ...server.deps, providers }, retake).then(
      (result) => result,
      (error: unknown) => error,
    );
    await requeryEntered;
    await expireLease(reference);
    const [taken] = await claimDueTransactions(db(), "w-new", 1, 30);
    expect(taken?.reference).toBe(reference);
    open();
    const result = await slow;
    // "Not found" told the slow worker to send, but the job is no longer its own: nothing went out.
    expect(await sandboxVends(reference)).toBe(0);
    expect(result).not.toMatchObject({ changed: true });
    expect(await row(reference)).toMatchObject({ status: "processing", leaseOwner: "w-new" });

    if (!taken) throw new Error("not claimed");
    expect(await processClaimed(server.deps, taken)).toMatchObject({ changed: true, row: { status: "successful" } });
    expect(await sandboxVends(reference)).toBe(1);
    expect(await settlements(taken.id)).toEqual(["capture", "hold"]);
  });

  test("a heartbeat finds the lease gone and stops the job before any further provider call", async () => {
    const reference = await vend(sandbox);
    const keeper = startLeaseKeeper(server.deps, "w-beat", 30);
    try {
      // Only this order is due: an earlier test's order coming due must not be the one "w-beat", and then
      // "w-other", takes (w-beat would watch a lease nobody takes over).
      await changeTransactions(db(), sql`update transactions set next_attempt_at = 'infinity' where reference <> ${reference}`);
      const claimedAt = performance.now();
      const [claim] = await claimDueTransactions(db(), "w-beat", 1, 30);
      if (!claim) throw new Error("not claimed");
      expect(claim.reference).toBe(reference);
      const lease = keeper.watch(claim, claimedAt);
      await keeper.beat();
      expect(() => lease.assertHeld()).not.toThrow();
      await expireLease(reference);
      const [takenOver] = await claimDueTransactions(db(), "w-other", 1, 30);
      expect(takenOver?.reference).toBe(reference);
      await keeper.beat();
      expect(() => lease.assertHeld()).toThrow(/lease/);
      const stopped = await processClaimed(server.deps, claim, lease).catch((error: unknown) => error);
      expect(stopped).toBeInstanceOf(Error);
      expect(await sandboxVends(reference)).toBe(0);
      expect(await row(reference)).toMatchObject({ status: "processing", leaseOwner: "w-other" });
      lease.release();
    } finally {
      keeper.stop();
    }
  });
});

describe("start-up", () => {
  test("a lease that cannot outlast a re-query then a send is refused: one line naming WORKER_LEASE_SECONDS, exit 1", async () => {
    const main = join(import.meta.dir, "../../src/main.ts");
    const started = spawnProcess(
      [process.execPath, main],
      childEnv({
        VEND_DATA_DIR: "memory://",
        VTU_BASE_URL: slowVtu.baseUrl,
        VTU_API_KEY: slowVtu.apiKey,
        VTU_SECRET_KEY: slowVtu.secretKey,
        VTU_CALLBACK_TOKEN: slowVtu.callbackToken,
        VTU_CALLBACK_SECRET: slowVtu.callbackSecret,
        VTU_TIMEOUT_MS: "8000",
        WORKER_LEASE_SECONDS: "2",
      }),
    );
    expect(await started.proc.exited).toBe(1);
    await started.waitFor(/Invalid configuration/, 2000);
    expect(started.output().trim().split("\n")).toEqual([
      "Invalid configuration: WORKER_LEASE_SECONDS must be at least 21 (twice VTU_TIMEOUT_MS of 8000 ms for a re-query then a send, plus 5 s), got 2",
    ]);
  });
});
