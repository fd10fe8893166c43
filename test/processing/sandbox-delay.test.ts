// Runs alone, after the other files: it measures the time from a vend to its delayed callback against a 500 ms budget.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import { type Background, processingRunner, startBackground } from "../../src/background.ts";
import { events, ledgerEntries, providerCallbacks, sandboxOrders, transactions } from "../../src/db/schema/index.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { loadConfig } from "../../src/load-config.ts";
import { sandboxCallbackQueue } from "../../src/providers/sandbox/callback-queue.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { verifyWebhook } from "../helpers/webhook-receiver.ts";

// The sandbox's delayed outcomes (destinations ending 2222: successful, 3333: failed) come by signed callback
// SANDBOX_CALLBACK_DELAY_MS after the vend (2000 ms by default). A shorter delay keeps 20 tries one at a time
// quick; what is measured is the lateness beyond it, which does not depend on its length.
const delayMs = 1000;
const budgetMs = delayMs + 500;
const defaults = loadConfig({});
const funded = 100_000_000;
const amountKobo = 10_000;

let server: TestServer;
let background: Background;
let client: HttpClient;
let secret: string;
let receiver: ReturnType<typeof startArrivals>;

/**
 * A webhook endpoint that notes when each transaction's final event arrives (the test's own clock), so an
 * order's time to its outcome is measured as its client sees it, without polling.
 */
function startArrivals() {
  const arrived = new Map<string, { at: number; type: string }[]>();
  const waiting = new Map<string, (at: number) => void>();
  const http = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const at = performance.now();
      const headers: Record<string, string> = {};
      request.headers.forEach((value, key) => {
        headers[key] = value;
      });
      const event = verifyWebhook(secret, { path: "/", headers, body: await request.text() }) as {
        type: string;
        data: { reference: string };
      };
      const reference = event.data.reference;
      arrived.set(reference, [...(arrived.get(reference) ?? []), { at, type: event.type }]);
      waiting.get(reference)?.(at);
      return new Response("ok");
    },
  });
  return {
    url: `http://127.0.0.1:${http.port}`,
    arrived,
    /** When the first final event for `reference` arrived (at once if it already has). */
    arrival(reference: string, timeoutMs = 15_000): Promise<number> {
      const first = arrived.get(reference)?.[0];
      if (first) return Promise.resolve(first.at);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no webhook for ${reference} within ${timeoutMs} ms`)), timeoutMs);
        waiting.set(reference, (at) => {
          clearTimeout(timer);
          waiting.delete(reference);
          resolve(at);
        });
      });
    },
    close: () => http.stop(true),
  };
}

beforeAll(async () => {
  // WORKER_POLL_MS stays at its default: the delayed callbacks must not depend on it.
  server = await startTestServer({
    maxWaitSeconds: 10,
    providers: { ...defaults.providers, sandbox: { ...defaults.providers.sandbox, callbackDelayMs: delayMs } },
  });
  background = startBackground(server.deps, server.url);
  client = (await fundedAccount(server, funded)).client;
  receiver = startArrivals();
  const endpoint = await client.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/hooks` });
  secret = endpoint.json.data.secret;
}, 60_000);
afterAll(async () => {
  await background.stop();
  await server.close();
  await receiver.close();
});

interface Timed {
  reference: string;
  expected: "successful" | "failed";
  /** From the moment the vend request is sent to the moment its final webhook arrives (the client's clock). */
  toWebhookMs: number;
  /** completed_at − created_at (the database's clock): the order's own record of the same interval. */
  recordedMs: number;
}

const phoneFor = (n: number) => (n % 2 === 0 ? "08031232222" : "08031233333");

/**
 * One delayed order, timed: sent with `wait` as long as the budget allows (whole seconds), so its answer must
 * already be final; its time counts from the moment the request leaves, which is before the order is accepted,
 * to the arrival of its final webhook, which is after it is final: the honest bound on what a client waits.
 */
async function timedVend(phone: string): Promise<Timed> {
  const sent = performance.now();
  const res = await client.post(
    "/api/v1/vend",
    { product_code: "mtn-airtime", phone_number: phone, amount_kobo: amountKobo },
    { ...idem(), query: { wait: Math.ceil(budgetMs / 1000) } },
  );
  expect(res.status).toBe(202);
  return timing(res.json.data.reference, phone, sent);
}

/** The order's times once its final webhook has arrived, counted from `sent` (the test's clock). */
async function timing(reference: string, phone: string, sent: number): Promise<Timed> {
  const arrived = await receiver.arrival(reference);
  const row = await transactionOf(reference);
  return {
    reference,
    expected: phone.endsWith("2222") ? "successful" : "failed",
    toWebhookMs: Math.round(arrived - sent),
    recordedMs: (row.completedAt?.getTime() ?? Number.NaN) - row.createdAt.getTime(),
  };
}

const summary = (timed: Timed[]) => {
  const ms = timed.map((t) => t.toWebhookMs).sort((a, b) => a - b);
  const recorded = timed.map((t) => t.recordedMs).sort((a, b) => a - b);
  return `to webhook min ${ms[0]} median ${ms[Math.floor(ms.length / 2)]} max ${ms.at(-1)} ms; recorded max ${recorded.at(-1)} ms`;
};

/** Each order final with the outcome its destination chose, within the budget by both measures. */
function expectOnTime(timed: Timed[]) {
  console.log(`delayed callbacks (delay ${delayMs} ms, budget ${budgetMs} ms): ${summary(timed)}`);
  const late = timed.filter((t) => !(t.toWebhookMs <= budgetMs && t.recordedMs <= budgetMs));
  expect({ late, of: timed.length }).toEqual({ late: [], of: timed.length });
}

/**
 * Each order completed exactly once: two ledger entries (its hold, then its capture or its release), one final
 * event, one order on the sandbox's books whose callback is marked sent; and the wallet as the ledger says.
 */
async function expectCompletedOnce(timed: Timed[]) {
  const db = server.database.handle.db;
  const references = timed.map((t) => t.reference);
  const rows = await db.select().from(transactions).where(inArray(transactions.reference, references));
  expect(rows).toHaveLength(timed.length);
  const ids = rows.map((r) => r.id);
  const entries = await db.select().from(ledgerEntries).where(inArray(ledgerEntries.transactionId, ids));
  const finals = await db.select().from(events).where(inArray(events.transactionId, ids));
  const books = await db.select().from(sandboxOrders).where(inArray(sandboxOrders.reference, references));
  for (const t of timed) {
    const row = rows.find((r) => r.reference === t.reference);
    const kinds = entries
      .filter((e) => e.transactionId === row?.id)
      .map((e) => e.kind)
      .sort();
    const book = books.find((b) => b.reference === t.reference);
    expect({
      reference: t.reference,
      status: row?.status,
      kinds,
      events: finals.filter((e) => e.transactionId === row?.id).map((e) => e.type),
      webhooks: receiver.arrived.get(t.reference)?.map((a) => a.type),
      vends: book?.vendCount,
      callbackSent: book?.callbackSentAt instanceof Date,
    }).toEqual({
      reference: t.reference,
      status: t.expected,
      kinds: t.expected === "successful" ? ["capture", "hold"] : ["hold", "release"],
      events: [`transaction.${t.expected}`],
      webhooks: [`transaction.${t.expected}`],
      vends: 1,
      callbackSent: true,
    });
  }
}

/** Every order of the account so far: the wallet holds the funding less the successes, nothing held; the ledger reconciles. */
async function expectWalletReconciles() {
  const db = server.database.handle.db;
  const all = await db.select().from(transactions);
  expect(all.every((t) => t.status === "successful" || t.status === "failed")).toBe(true);
  const spent = all.filter((t) => t.status === "successful").reduce((sum, t) => sum + Number(t.priceKobo), 0);
  const wallet = (await client.get("/api/v1/wallet")).json.data;
  expect(wallet).toMatchObject({ balance_kobo: funded - spent, held_kobo: 0, available_kobo: funded - spent });
  const kinds = (await db.select({ kind: ledgerEntries.kind }).from(ledgerEntries)).map((e) => e.kind);
  const count = (kind: string) => kinds.filter((k) => k === kind).length;
  expect({ holds: count("hold"), captures: count("capture"), releases: count("release") }).toEqual({
    holds: all.length,
    captures: all.filter((t) => t.status === "successful").length,
    releases: all.filter((t) => t.status === "failed").length,
  });
  expect(await reconcileWallets(db)).toEqual([]);
}

describe(`delayed sandbox outcomes arrive within SANDBOX_CALLBACK_DELAY_MS + 500 ms, whatever WORKER_POLL_MS`, () => {
  test("the poll is the default (5000 ms), longer than the whole budget; the delay's own default is 2000 ms", () => {
    expect(server.deps.config.worker.pollMs).toBe(5000);
    expect(defaults.providers.sandbox.callbackDelayMs).toBe(2000);
  });

  test("alone: 20 of 20 orders one at a time", async () => {
    const timed: Timed[] = [];
    for (let n = 0; n < 20; n++) timed.push(await timedVend(phoneFor(n)));
    expectOnTime(timed);
    await expectCompletedOnce(timed);
    await expectWalletReconciles();
  }, 90_000);

  test("at ten a second: 20 of 20 orders sent over 2 s", async () => {
    const start = performance.now();
    const timed = await Promise.all(
      Array.from({ length: 20 }, async (_, n) => {
        await Bun.sleep(Math.max(0, start + n * 100 - performance.now()));
        return timedVend(phoneFor(n));
      }),
    );
    expectOnTime(timed);
    await expectCompletedOnce(timed);
    await expectWalletReconciles();
  }, 60_000);

  test("callbacks booked by a process that is gone are sent on time by one started after", async () => {
    // The vends are sent by a runner that then goes away (a tick), before any callback is due: only the
    // database knows the callbacks when the background starts.
    await background.stop();
    const started = performance.now();
    const phones = [0, 1, 2, 3].map(phoneFor);
    const sent = await Promise.all(
      phones.map(async (phone) => {
        const res = await client.post(
          "/api/v1/vend",
          { product_code: "mtn-airtime", phone_number: phone, amount_kobo: amountKobo },
          idem(),
        );
        expect(res.status).toBe(202);
        return { reference: res.json.data.reference as string, phone };
      }),
    );
    await processingRunner({ ...server.deps, apiBaseUrl: server.url }, "gone-worker").tick();
    const references = sent.map((s) => s.reference);
    const waiting = await server.database.handle.db
      .select()
      .from(sandboxOrders)
      .where(and(inArray(sandboxOrders.reference, references), isNull(sandboxOrders.callbackSentAt)));
    expect(waiting).toHaveLength(sent.length);
    background = startBackground(server.deps, server.url);
    const timed = await Promise.all(sent.map(({ reference, phone }) => timing(reference, phone, started)));
    expectOnTime(timed);
    await expectCompletedOnce(timed);
    const callbacks = await server.database.handle.db
      .select()
      .from(providerCallbacks)
      .where(inArray(providerCallbacks.reference, references));
    expect(callbacks).toHaveLength(sent.length);
    await expectWalletReconciles();
  }, 60_000);
});

describe("a callback is neither lost nor applied twice when its sender dies", () => {
  test("a claim whose process died before the send is sent when its lease runs out; a send whose record was lost is sent again and changes nothing", async () => {
    // Only this test's runners work meanwhile: ticks, as a worker's loop would run them.
    await background.stop();
    const db = server.database.handle.db;
    const tick = () => processingRunner({ ...server.deps, apiBaseUrl: server.url }, "delay-worker").tick();
    const book = async (reference: string) => {
      const [row] = await db.select().from(sandboxOrders).where(eq(sandboxOrders.reference, reference));
      return row;
    };
    const callbacksFor = (reference: string) =>
      db.select().from(providerCallbacks).where(eq(providerCallbacks.reference, reference));
    const dueNow = (reference: string, sent: "keep" | "lost") =>
      db
        .update(sandboxOrders)
        .set({ callbackDueAt: sql`now()`, ...(sent === "lost" ? { callbackSentAt: null } : {}) })
        .where(eq(sandboxOrders.reference, reference));
    try {
      const res = await client.post(
        "/api/v1/vend",
        { product_code: "mtn-airtime", phone_number: "08031232222", amount_kobo: amountKobo },
        idem(),
      );
      const reference: string = res.json.data.reference;
      await tick();
      const before = await transactionOf(reference);
      expect(before.status).toBe("pending");

      // The delay has passed; a process claims the callback and dies before sending it.
      await dueNow(reference, "keep");
      const session = sandboxCallbackQueue(
        { db, logger: server.deps.logger, apiBaseUrl: server.url },
        server.deps.config.providers.sandbox,
      ).open();
      expect(await session.claim({ limit: 10, busy: new Map() })).toHaveLength(1);
      await session.close({ release: false });
      const leased = await book(reference);
      expect({ status: leased?.status, sent: leased?.callbackSentAt }).toEqual({ status: "successful", sent: null });
      expect(leased?.callbackDueAt?.getTime()).toBeGreaterThan(Date.now() + 10_000);
      // Leased: no other process sends it meanwhile.
      await tick();
      expect((await transactionOf(reference)).status).toBe("pending");
      expect(await callbacksFor(reference)).toHaveLength(0);

      // The lease runs out: the next claim sends it, and the order completes.
      await dueNow(reference, "keep");
      await tick();
      const completed = await transactionOf(reference);
      expect(completed.status).toBe("successful");
      expect((await book(reference))?.callbackSentAt).toBeInstanceOf(Date);
      expect((await callbacksFor(reference)).map((c) => c.httpStatus)).toEqual([200]);

      // Sent, but the record of it was lost (the process died after the answer): it is sent again, answered 200
      // as the same outcome, and nothing moves.
      await dueNow(reference, "lost");
      await tick();
      expect((await callbacksFor(reference)).map((c) => c.httpStatus)).toEqual([200, 200]);
      const after = await transactionOf(reference);
      expect({ status: after.status, completedAt: after.completedAt }).toEqual({
        status: "successful",
        completedAt: completed.completedAt,
      });
      const kinds = (await db.select().from(ledgerEntries).where(eq(ledgerEntries.transactionId, after.id))).map((e) => e.kind);
      expect(kinds.sort()).toEqual(["capture", "hold"]);
      expect((await db.select().from(events).where(eq(events.transactionId, after.id))).map((e) => e.type)).toEqual([
        "transaction.successful",
      ]);
      expect((await book(reference))?.vendCount).toBe(1);
    } finally {
      background = startBackground(server.deps, server.url);
    }
    await expectWalletReconciles();
  }, 60_000);
});

async function transactionOf(reference: string) {
  const [row] = await server.database.handle.db.select().from(transactions).where(eq(transactions.reference, reference));
  if (!row) throw new Error(`no ${reference}`);
  return row;
}
