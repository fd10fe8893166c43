import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { ledgerEntries, transactions, wallets } from "../../src/db/schema/index.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { fundedAccount, idem, newKey } from "../helpers/accounts.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

// Money is never created or lost: after every scenario the wallet equals the sum of its
// ledger (reconcileWallets is empty) and the held amount equals the prices of what was accepted.

describe("concurrent vends against one wallet", () => {
  test("200 distinct orders, money for exactly 100: 100 × 202, 100 × 402, available ends at 0", async () => {
    const price = 9_700; // ₦100 of MTN airtime at 3% discount
    const { id, client } = await fundedAccount(server, price * 100);
    const body = { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 };
    const answers = await Promise.all(Array.from({ length: 200 }, () => client.post("/api/v1/vend", body, idem())));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(100);
    expect(statuses.filter((s) => s === 402)).toHaveLength(100);
    const wallet = (await client.get("/api/v1/wallet")).json.data;
    expect(wallet).toMatchObject({ balance_kobo: price * 100, held_kobo: price * 100, available_kobo: 0 });
    const db = server.database.handle.db;
    const accepted = await db.select().from(transactions).where(eq(transactions.accountId, id));
    expect(accepted).toHaveLength(100);
    expect(new Set(accepted.map((t) => t.reference)).size).toBe(100);
    expect(await reconcileWallets(db)).toEqual([]);
  }, 120_000);
});

describe("one Idempotency-Key, many concurrent requests", () => {
  test("50 identical requests: one transaction, one hold; each answer is the same 202 or 409; replay is byte-identical", async () => {
    const { id, client } = await fundedAccount(server, 1_000_000);
    const body = { product_code: "airtel-airtime", phone_number: "08021234567", amount_kobo: 20_000, metadata: { order: "A-1" } };
    const key = idem(newKey("same"));
    const answers = await Promise.all(Array.from({ length: 50 }, () => client.post("/api/v1/vend", body, key)));
    const accepted = answers.filter((a) => a.status === 202);
    const inProgress = answers.filter((a) => a.status === 409);
    expect(accepted.length + inProgress.length).toBe(50);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    expect(new Set(accepted.map((a) => a.text)).size).toBe(1);
    for (const busy of inProgress) {
      expect(busy.json.code).toBe("IDEMPOTENCY_IN_PROGRESS");
      expect(Number(busy.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    const db = server.database.handle.db;
    const txns = await db.select().from(transactions).where(eq(transactions.accountId, id));
    expect(txns).toHaveLength(1);
    const [wallet] = await db.select().from(wallets).where(eq(wallets.accountId, id));
    const holds = await db
      .select()
      .from(ledgerEntries)
      .where(eq(ledgerEntries.walletId, wallet?.id ?? ""));
    expect(holds.filter((e) => e.kind === "hold")).toHaveLength(1);

    const replay = await client.post(
      "/api/v1/vend",
      { metadata: { order: "A-1" }, amount_kobo: 20_000, phone_number: "08021234567", product_code: "airtel-airtime" },
      key,
    );
    expect(replay.status).toBe(202);
    expect(replay.text).toBe(accepted[0]?.text ?? "");
    expect(replay.headers.get("idempotent-replayed")).toBe("true");

    const reused = await client.post("/api/v1/vend", { ...body, amount_kobo: 30_000 }, key);
    expect(reused.status).toBe(422);
    expect(reused.json.code).toBe("IDEMPOTENCY_KEY_REUSED");
    expect(await db.select().from(transactions).where(eq(transactions.accountId, id))).toHaveLength(1);
    expect(await reconcileWallets(db)).toEqual([]);
  }, 120_000);

  test("the key is scoped to account, mode, method and path", async () => {
    const a = await fundedAccount(server, 1_000_000);
    const b = await fundedAccount(server, 1_000_000);
    const key = idem(newKey("shared"));
    const airtime = { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 };
    const first = await a.client.post("/api/v1/vend", airtime, key);
    const otherAccount = await b.client.post("/api/v1/vend", airtime, key);
    const otherPath = await a.client.post(
      "/api/v1/bills/cable",
      { biller: "dstv", smartcard_number: "7031234567", product_code: "dstv-padi" },
      key,
    );
    expect([first.status, otherAccount.status, otherPath.status]).toEqual([202, 202, 202]);
    expect(new Set([first.json.data.reference, otherAccount.json.data.reference, otherPath.json.data.reference]).size).toBe(3);
  });
});
