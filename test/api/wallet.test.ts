import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { cte } from "../../src/db/cte.ts";
import { queryRows } from "../../src/db/rows.ts";
import { idempotencyRecords } from "../../src/db/schema/index.ts";
import { notFound } from "../../src/errors.ts";
import { deleteExpiredIdempotencyRecords, runIdempotent } from "../../src/idempotency/protocol.ts";
import { storeAnswers } from "../../src/idempotency/store-answers.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { idem } from "../helpers/accounts.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe("wallet", () => {
  test("a new account's wallets are empty, one per mode", async () => {
    const { testKey, liveKey } = await server.createAccount();
    const empty = { currency: "NGN", balance_kobo: 0, held_kobo: 0, available_kobo: 0, low_balance_threshold_kobo: null };
    expect((await server.client(testKey).get("/api/v1/wallet")).json.data).toEqual({ mode: "test", ...empty });
    expect((await server.client(liveKey).get("/api/v1/wallet")).json.data).toEqual({ mode: "live", ...empty });
  });

  test("funding a test wallet is a ledger entry, and idempotent", async () => {
    const { testKey } = await server.createAccount();
    const client = server.client(testKey);
    const key = idem();
    const first = await client.post("/api/v1/wallet/fund", { amount_kobo: 250_000, note: "QA float" }, key);
    expect(first.status).toBe(200);
    expect(first.json.data.entry).toMatchObject({
      kind: "fund",
      amount_kobo: 250_000,
      balance_after_kobo: 250_000,
      held_after_kobo: 0,
      note: "QA float",
    });
    expect(first.json.data.wallet).toMatchObject({ balance_kobo: 250_000, available_kobo: 250_000 });
    const again = await client.post("/api/v1/wallet/fund", { note: "QA float", amount_kobo: 250_000 }, key);
    expect(again.text).toBe(first.text);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await client.get("/api/v1/wallet")).json.data.balance_kobo).toBe(250_000);
    const changed = await client.post("/api/v1/wallet/fund", { amount_kobo: 1 }, key);
    expect(changed.status).toBe(422);
    expect(await reconcileWallets(server.database.handle.db)).toEqual([]);
  });

  test("a live key cannot fund: 403 TEST_MODE_ONLY, nothing moves", async () => {
    const { liveKey } = await server.createAccount();
    const res = await server.client(liveKey).post("/api/v1/wallet/fund", { amount_kobo: 100 }, idem());
    expect(res.status).toBe(403);
    expect(res.json.code).toBe("TEST_MODE_ONLY");
    expect((await server.client(liveKey).get("/api/v1/wallet")).json.data.balance_kobo).toBe(0);
  });

  test.each([[{ amount_kobo: 0 }], [{ amount_kobo: -5 }], [{ amount_kobo: 1.5 }], [{}], [{ amount_kobo: 100, extra: 1 }]])(
    "fund body %j is 400",
    async (body) => {
      const { testKey } = await server.createAccount();
      const res = await server.client(testKey).post("/api/v1/wallet/fund", body, idem());
      expect(res.status).toBe(400);
    },
  );
});

describe("idempotency retention", () => {
  test("records are kept 24 hours; the clean-up job removes expired ones and the key is free again", async () => {
    const { testKey } = await server.createAccount();
    const client = server.client(testKey);
    const key = idem();
    await client.post("/api/v1/wallet/fund", { amount_kobo: 100 }, key);
    const db = server.database.handle.db;
    const [record] = await db.select().from(idempotencyRecords);
    expect(record).toBeDefined();
    const retainedMs = (record?.expiresAt.getTime() ?? 0) - (record?.createdAt.getTime() ?? 0);
    expect(retainedMs).toBeGreaterThanOrEqual(24 * 3600_000 - 1000);
    expect(await deleteExpiredIdempotencyRecords(db, new Date())).toBe(0);
    const removed = await deleteExpiredIdempotencyRecords(db, new Date(Date.now() + 25 * 3600_000));
    expect(removed).toBeGreaterThanOrEqual(1);
    const reused = await client.post("/api/v1/wallet/fund", { amount_kobo: 100 }, key);
    expect(reused.headers.get("idempotent-replayed")).toBeNull();
    expect((await client.get("/api/v1/wallet")).json.data.balance_kobo).toBe(200);
  });

  test("an expired answer is replaced in place: the key runs again and its one record is the new answer", async () => {
    const { testKey } = await server.createAccount();
    const client = server.client(testKey);
    const key = idem();
    const first = await client.post("/api/v1/wallet/fund", { amount_kobo: 100 }, key);
    const db = server.database.handle.db;
    const ofKey = eq(idempotencyRecords.key, key.headers["idempotency-key"]);
    await db
      .update(idempotencyRecords)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(ofKey);
    const again = await client.post("/api/v1/wallet/fund", { amount_kobo: 100 }, key);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    expect(again.json.data.entry.id).not.toBe(first.json.data.entry.id);
    expect((await client.get("/api/v1/wallet")).json.data.balance_kobo).toBe(200);
    const records = await db.select().from(idempotencyRecords).where(ofKey);
    expect(records).toHaveLength(1);
    expect(records[0]?.expiresAt.getTime()).toBeGreaterThan(Date.now());
    expect(JSON.parse(records[0]?.responseBody ?? "{}").data.entry.id).toBe(again.json.data.entry.id);
  });

  test("an expired answer is replaced by an error that is part of the answer", async () => {
    const db = server.database.handle.db;
    const id = { scope: "admin", method: "POST", path: "replaceExpired", key: randomUUID() };
    await runIdempotent(db, id, {}, async () => ({ status: 200, body: '{"first":true}' }));
    const ofKey = eq(idempotencyRecords.key, id.key);
    await db
      .update(idempotencyRecords)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(ofKey);
    const refused = await runIdempotent(db, id, {}, async () => {
      throw notFound("Wallet");
    });
    expect(refused).toMatchObject({ status: 404, replayed: false });
    const records = await db.select().from(idempotencyRecords).where(ofKey);
    expect(records.map((r) => [r.responseStatus, r.responseBody])).toEqual([[404, refused.body]]);
  });

  test("the store deletes a record it replaces only while that record is expired", async () => {
    // A record the claim found in an earlier statement may have been swept since, and its row's place taken by another key's.
    const db = server.database.handle.db;
    const taken = { scope: "admin", method: "POST", path: "storeGuard", key: randomUUID() };
    await runIdempotent(db, taken, {}, async () => ({ status: 200, body: "{}" }));
    const [found] = await queryRows<{ record: string }>(
      db,
      sql`select ctid::text as record from idempotency_records where key = ${taken.key}`,
    );
    const answer = cte("answer", ["scope", "method", "path", "key", "fingerprint", "status", "body"]);
    const replacing = cte("replacing", ["record"]);
    await queryRows(
      db,
      sql`with answer as (
            select 'admin'::text as scope, 'POST'::text as method, 'storeGuard'::text as path, ${randomUUID()}::text as key,
                   'f'::text as fingerprint, 200 as status, '{}'::text as body
          ), replacing as (select ${found?.record ?? null}::tid as record), ${storeAnswers(answer, replacing)}
          select 1`,
    );
    const records = await db.select().from(idempotencyRecords).where(eq(idempotencyRecords.path, "storeGuard"));
    expect(records.map((r) => r.key)).toContain(taken.key);
    expect(records).toHaveLength(2);
  });
});
