import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { expectRecordedByAnswer, idem } from "../helpers/accounts.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe("admin: keys", () => {
  test("create, list (prefixes only), revoke: a revoked key is refused from its recorded revoked_at, though it was used", async () => {
    const account = await server.createAccount("Keys Ltd");
    const created = await server.admin.post(`/admin/v1/accounts/${account.id}/keys`, { mode: "test" });
    expect(created.status).toBe(201);
    const key: string = created.json.data.key;
    expect(key).toMatch(/^rg_test_/);
    const client = server.client(key);
    expect((await client.get("/api/v1/wallet")).status).toBe(200);
    expect((await client.get("/api/v1/wallet")).status).toBe(200);

    const listed = await server.admin.get(`/admin/v1/accounts/${account.id}/keys`);
    expect(listed.json.data).toHaveLength(3);
    expect(listed.text).not.toContain(key);

    const revoked = await server.admin.delete(`/admin/v1/keys/${created.json.data.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.json.data.revoked_at).toBeString();
    expectRecordedByAnswer(revoked.json.data.revoked_at);
    const refused = await client.get("/api/v1/wallet");
    expect(refused.status).toBe(401);
    expect(refused.json.code).toBe("UNAUTHENTICATED");
    const again = await server.admin.delete(`/admin/v1/keys/${created.json.data.id}`);
    expect(again.json.data.revoked_at).toBe(revoked.json.data.revoked_at);
    expect((await server.client(account.testKey).get("/api/v1/wallet")).status).toBe(200);
  });

  test("unknown account or key is 404; bad ids are 400", async () => {
    const missing = "00000000-0000-4000-8000-000000000000";
    expect((await server.admin.post(`/admin/v1/accounts/${missing}/keys`, { mode: "live" })).status).toBe(404);
    expect((await server.admin.get(`/admin/v1/accounts/${missing}`)).status).toBe(404);
    expect((await server.admin.delete(`/admin/v1/keys/${missing}`)).status).toBe(404);
    const bad = await server.admin.get("/admin/v1/accounts/not-a-uuid");
    expect(bad.status).toBe(400);
    expect(bad.json.data.errors[0].field).toBe("account_id");
  });
});

describe("admin: wallets", () => {
  test("credit either mode with a note, idempotently; the account shows both wallets", async () => {
    const account = await server.createAccount("Float Ltd");
    const key = idem();
    const credit = await server.admin.post(
      `/admin/v1/accounts/${account.id}/wallet/credit`,
      { mode: "live", amount_kobo: 5_000_000, note: "Bank transfer 88213" },
      key,
    );
    expect(credit.status).toBe(200);
    expect(credit.json.data.entry).toMatchObject({
      kind: "credit",
      wallet_mode: "live",
      amount_kobo: 5_000_000,
      note: "Bank transfer 88213",
    });
    const replay = await server.admin.post(
      `/admin/v1/accounts/${account.id}/wallet/credit`,
      { mode: "live", amount_kobo: 5_000_000, note: "Bank transfer 88213" },
      key,
    );
    expect(replay.text).toBe(credit.text);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    const detail = await server.admin.get(`/admin/v1/accounts/${account.id}`);
    expect(detail.json.data.wallets).toEqual([
      {
        mode: "live",
        currency: "NGN",
        balance_kobo: 5_000_000,
        held_kobo: 0,
        available_kobo: 5_000_000,
        low_balance_threshold_kobo: null,
      },
      { mode: "test", currency: "NGN", balance_kobo: 0, held_kobo: 0, available_kobo: 0, low_balance_threshold_kobo: null },
    ]);
    expect((await server.client(account.liveKey).get("/api/v1/wallet")).json.data.balance_kobo).toBe(5_000_000);
    expect(await reconcileWallets(server.database.handle.db)).toEqual([]);
  });

  test("credit needs a note and a positive amount; unknown account is 404", async () => {
    const account = await server.createAccount();
    expect(
      (await server.admin.post(`/admin/v1/accounts/${account.id}/wallet/credit`, { mode: "test", amount_kobo: 100 }, idem()))
        .status,
    ).toBe(400);
    expect(
      (
        await server.admin.post(
          `/admin/v1/accounts/${account.id}/wallet/credit`,
          { mode: "test", amount_kobo: 0, note: "x" },
          idem(),
        )
      ).status,
    ).toBe(400);
    const missing = await server.admin.post(
      "/admin/v1/accounts/00000000-0000-4000-8000-000000000000/wallet/credit",
      { mode: "test", amount_kobo: 1, note: "x" },
      idem(),
    );
    expect(missing.status).toBe(404);
  });
});
