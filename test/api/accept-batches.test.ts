import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, asc, countDistinct, eq } from "drizzle-orm";
import postgres from "postgres";
import { idempotencyRecords, ledgerEntries, transactions, wallets } from "../../src/db/schema/index.ts";
import { successEnvelope } from "../../src/errors.ts";
import { fingerprintOf, type IdempotencyKey, lockNameOf } from "../../src/idempotency/protocol.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { type AcceptRequest, acceptVends, type VendOrder } from "../../src/orders/accept-vends.ts";
import { findProduct } from "../../src/orders/product-cache.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const onPostgres = Boolean(process.env.DATABASE_URL);

async function holdEntries(accountId: string) {
  const db = server.database.handle.db;
  const [wallet] = await db
    .select()
    .from(wallets)
    .where(and(eq(wallets.accountId, accountId), eq(wallets.mode, "test")));
  return db
    .select()
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.walletId, wallet?.id ?? ""), eq(ledgerEntries.kind, "hold")))
    .orderBy(asc(ledgerEntries.id));
}

describe("accepts combined on one hot wallet (over HTTP)", () => {
  // Money: the wallet holds exactly what the 202s cost, every hold has one ledger entry whose held_after is
  // the running sum in entry order (as if the accepts had run one by one), and every wallet equals its ledger.
  test("200 concurrent accepts, money for 100: 100 × 202, 100 × 402, each 402 stored for its own key", async () => {
    const price = 9_700; // ₦100 of MTN airtime at 3% discount
    const { id, client } = await fundedAccount(server, price * 100, "hot");
    const body = { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 };
    const keys = Array.from({ length: 200 }, (_, i) => `hot-${id}-${i}`);
    const answers = await Promise.all(keys.map((key) => client.post("/api/v1/vend", body, idem(key))));
    expect(answers.filter((a) => a.status === 202)).toHaveLength(100);
    const refused = answers.flatMap((a, i) => (a.status === 402 ? [{ key: keys[i] ?? "", text: a.text }] : []));
    expect(refused).toHaveLength(100);

    // Each 402 is that key's answer: replayed byte for byte, and the key's record says 402.
    for (const { key, text } of refused.slice(0, 20)) {
      const again = await client.post("/api/v1/vend", body, idem(key));
      expect(again.status).toBe(402);
      expect(again.text).toBe(text);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
    }
    const db = server.database.handle.db;
    const records = await db
      .select()
      .from(idempotencyRecords)
      .where(and(eq(idempotencyRecords.scope, `account:${id}:test`), eq(idempotencyRecords.path, "vendProduct")));
    expect(records).toHaveLength(200);
    expect(records.filter((r) => r.responseStatus === 402)).toHaveLength(100);

    const accepted = await db.select().from(transactions).where(eq(transactions.accountId, id));
    expect(accepted).toHaveLength(100);
    const holds = await holdEntries(id);
    expect(holds.map((e) => e.heldAfterKobo)).toEqual(Array.from({ length: 100 }, (_, i) => price * (i + 1)));
    expect(new Set(holds.map((e) => e.transactionId))).toEqual(new Set(accepted.map((t) => t.id)));
    const wallet = (await client.get("/api/v1/wallet")).json.data;
    expect(wallet).toMatchObject({ balance_kobo: price * 100, held_kobo: price * 100, available_kobo: 0 });
    expect(await reconcileWallets(db)).toEqual([]);

    // On PostgreSQL they were combined: a statement's accepts share its creation time, so there are fewer
    // times than accepts. (The embedded engine runs on the event loop's thread, so requests seldom queue up.)
    if (!onPostgres) return;
    const [times] = await db
      .select({ n: countDistinct(transactions.createdAt) })
      .from(transactions)
      .where(eq(transactions.accountId, id));
    expect(times?.n ?? 0).toBeLessThan(100);
  }, 120_000);
});

describe("one accept statement for a batch (acceptVends)", () => {
  const scopeOf = (accountId: string) => `account:${accountId}:test`;

  async function requestFor(accountId: string, key: string, priceKobo: number, tag: string): Promise<AcceptRequest> {
    const product = await findProduct(server.database.handle.db, "mtn-airtime");
    if (!product) throw new Error("mtn-airtime missing from the catalogue");
    const order: VendOrder = {
      product,
      destination: "2348031234567",
      amountKobo: priceKobo,
      priceKobo,
      clientReference: tag,
      metadata: { tag },
    };
    const id: IdempotencyKey = { scope: scopeOf(accountId), method: "POST", path: "vendProduct", key };
    return {
      wallet: { accountId, mode: "test" },
      key: id,
      fingerprint: fingerprintOf({ tag, priceKobo }),
      order,
      provider: "sandbox",
      render: (transaction) => JSON.stringify(successEnvelope(transaction, "accepted")),
    };
  }

  test("a replayed key, a key in flight, a reused key, a repeated key and fresh keys, each answered as if alone", async () => {
    const db = server.database.handle.db;
    const { id } = await fundedAccount(server, 101_000, "batch");
    const first = await requestFor(id, "replayed", 1_000, "A");
    const [alone] = await acceptVends(db, [first]);
    if (!alone || alone instanceof Error) throw new Error("the first accept failed");
    const reusedFirst = await requestFor(id, "reused", 2_000, "C");
    await acceptVends(db, [reusedFirst]);
    // Available now: 101,000 - 1,000 - 2,000 = 98,000.

    const reused = { ...(await requestFor(id, "reused", 3_000, "C2")) };
    const fresh = [
      await requestFor(id, "fresh-1", 60_000, "D"),
      await requestFor(id, "fresh-2", 50_000, "E"), // does not fit after D: 38,000 left
      await requestFor(id, "fresh-3", 38_000, "F"), // fits exactly what D left
    ];
    const inFlight = await requestFor(id, "in-flight", 500, "B");
    const batch = [first, reused, fresh[0], fresh[1], fresh[0], fresh[2], ...(onPostgres ? [inFlight] : [])] as AcceptRequest[];

    let answers: Awaited<ReturnType<typeof acceptVends>>;
    if (onPostgres) {
      // Another connection runs a request with the in-flight key: it holds that key's lock until it ends.
      const other = postgres(server.database.url ?? "", { max: 1, onnotice: () => {} });
      try {
        answers = await other.begin(async (tx) => {
          await tx`select pg_advisory_xact_lock(hashtextextended(${lockNameOf(inFlight.key)}, 0))`;
          return acceptVends(db, batch);
        });
      } finally {
        await other.end();
      }
    } else {
      answers = await acceptVends(db, batch);
    }

    const [replay, reuse, d, e, dAgain, f, busy] = answers;
    expect(replay).toEqual({ result: { ...alone.result, replayed: true } });
    expect(reuse).toMatchObject({ status: 422, code: "IDEMPOTENCY_KEY_REUSED" });
    expect(d).toMatchObject({ result: { status: 202, replayed: false } });
    expect(e).toMatchObject({ status: 402, code: "WALLET_INSUFFICIENT_FUNDS" });
    expect((e as Error).message).toContain("available NGN 380.00, required NGN 500.00");
    expect(dAgain).toMatchObject({ status: 409, code: "IDEMPOTENCY_IN_PROGRESS" });
    expect(f).toMatchObject({ result: { status: 202, replayed: false } });
    if (onPostgres) expect(busy).toMatchObject({ status: 409, code: "IDEMPOTENCY_IN_PROGRESS" });

    // Each accepted answer is what its key now replays, with the creation time of its row.
    for (const [request, answer] of [
      [fresh[0], d],
      [fresh[2], f],
    ] as const) {
      const body = (answer as { result: { body: string } }).result.body;
      const [record] = await db
        .select()
        .from(idempotencyRecords)
        .where(eq(idempotencyRecords.key, request?.key.key ?? ""));
      expect(record?.responseBody).toBe(body);
      const shown = JSON.parse(body).data;
      const [row] = await db.select().from(transactions).where(eq(transactions.reference, shown.reference));
      expect(shown.created_at).toBe(row?.createdAt.toISOString());
      expect(shown.status).toBe("queued");
    }
    // Nothing written for the 402, the 422, the 409s: 4 transactions in all (A, C, D, F), no record for E.
    const rows = await db.select().from(transactions).where(eq(transactions.accountId, id));
    expect(rows.map((r) => r.clientReference).sort()).toEqual(["A", "C", "D", "F"]);
    const e402 = await db.select().from(idempotencyRecords).where(eq(idempotencyRecords.key, "fresh-2"));
    expect(e402).toHaveLength(0);
    const [reusedRecord] = await db.select().from(idempotencyRecords).where(eq(idempotencyRecords.key, "reused"));
    expect(reusedRecord?.fingerprint).toBe(reusedFirst.fingerprint);

    // One hold entry per accept, each with the held amount as if they had run one after another.
    const holds = await holdEntries(id);
    expect(holds.map((h) => [h.amountKobo, h.heldAfterKobo])).toEqual([
      [1_000, 1_000],
      [2_000, 3_000],
      [60_000, 63_000],
      [38_000, 101_000],
    ]);
    const [after] = await db
      .select()
      .from(wallets)
      .where(and(eq(wallets.accountId, id), eq(wallets.mode, "test")));
    expect(after).toMatchObject({ balanceKobo: 101_000, heldKobo: 101_000 });
    expect(await reconcileWallets(db)).toEqual([]);
  }, 60_000);

  test("several wallets in one statement: each wallet's holds fit its own balance, in arrival order", async () => {
    const db = server.database.handle.db;
    const a = await fundedAccount(server, 1_000, "wallet-a");
    const b = await fundedAccount(server, 1_000, "wallet-b");
    const batch = [
      await requestFor(a.id, "a-1", 600, "A1"),
      await requestFor(b.id, "b-1", 500, "B1"),
      await requestFor(a.id, "a-2", 500, "A2"), // A has 400 left
      await requestFor(b.id, "b-2", 500, "B2"), // B has exactly 500 left
      await requestFor(a.id, "a-3", 400, "A3"), // fits A's 400
    ];
    // The live wallet of A has never been funded: refused, nothing written.
    const live = { ...(await requestFor(a.id, "a-live", 100, "AL")), wallet: { accountId: a.id, mode: "live" as const } };
    const answers = await acceptVends(db, [...batch, live]);
    expect(answers.map((answer) => (answer instanceof Error ? (answer as { status?: number }).status : 202))).toEqual([
      202, 202, 402, 202, 202, 402,
    ]);
    expect((answers[2] as Error).message).toContain("available NGN 4.00, required NGN 5.00");
    // Money: each wallet holds exactly what its 202s cost, one entry per hold, running in arrival order.
    for (const [account, expected] of [
      [
        a.id,
        [
          [600, 600],
          [400, 1_000],
        ],
      ],
      [
        b.id,
        [
          [500, 500],
          [500, 1_000],
        ],
      ],
    ] as const) {
      const entries = await holdEntries(account);
      expect(entries.map((e) => [e.amountKobo, e.heldAfterKobo])).toEqual(expected.map((pair) => [...pair]));
    }
    const rows = await db.select().from(transactions).where(eq(transactions.accountId, a.id));
    expect(rows.map((r) => r.clientReference).sort()).toEqual(["A1", "A3"]);
    expect(await reconcileWallets(db)).toEqual([]);
  }, 60_000);

  test("an expired answer is replaced by a fresh accept in the same statement", async () => {
    const db = server.database.handle.db;
    const { id } = await fundedAccount(server, 10_000, "expired");
    const request = await requestFor(id, "expiring", 1_000, "X");
    await acceptVends(db, [request]);
    await db
      .update(idempotencyRecords)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(idempotencyRecords.key, "expiring"));
    const [again] = await acceptVends(db, [request]);
    expect(again).toMatchObject({ result: { status: 202, replayed: false } });
    const records = await db.select().from(idempotencyRecords).where(eq(idempotencyRecords.key, "expiring"));
    expect(records).toHaveLength(1);
    expect(records[0]?.expiresAt.getTime()).toBeGreaterThan(Date.now());
    expect(await db.select().from(transactions).where(eq(transactions.accountId, id))).toHaveLength(2);
    expect(await reconcileWallets(db)).toEqual([]);
  }, 60_000);
});
