import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq, sql } from "drizzle-orm";
import { wallets } from "../../src/db/schema/index.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer(fastProcessing(), { background: true });
});
afterAll(() => server.close());

/** ₦100 of MTN airtime, answered once final; the destination's last four digits choose the sandbox outcome. */
async function vendFinal(client: HttpClient, phone: string): Promise<string> {
  const res = await client.post(
    "/api/v1/vend",
    { product_code: "mtn-airtime", phone_number: phone, amount_kobo: 10_000 },
    { ...idem(), query: { wait: 10 } },
  );
  expect(res.status).toBe(202);
  return res.json.data.status;
}

describe("GET /admin/v1/reconciliation", () => {
  test("balanced after fundings, credits and vends; a corrupted wallet is reported with both figures", async () => {
    const buyer = await fundedAccount(server, 1_000_000, "Books Ltd");
    expect(await vendFinal(buyer.client, "08031234567")).toBe("successful");
    expect(await vendFinal(buyer.client, "08031231111")).toBe("failed");
    const queued = await buyer.client.post(
      "/api/v1/vend",
      { product_code: "mtn-airtime", phone_number: "08031234444", amount_kobo: 10_000 },
      idem(),
    );
    expect(queued.status).toBe(202);
    const credited = await server.createAccount("Credited Ltd");
    const credit = await server.admin.post(
      `/admin/v1/accounts/${credited.id}/wallet/credit`,
      { mode: "live", amount_kobo: 500_000, note: "Bank transfer 1" },
      idem(),
    );
    expect(credit.status).toBe(200);

    const balanced = await server.admin.get("/admin/v1/reconciliation");
    expect(balanced.status).toBe(200);
    expect([balanced.json.success, balanced.json.code]).toEqual([true, "OK"]);
    expect(balanced.json.data).toMatchObject({ balanced: true, wallets_checked: 4, discrepancies: [] });
    expect(Math.abs(Date.parse(balanced.json.data.checked_at) - Date.now())).toBeLessThan(60_000);

    const db = server.database.handle.db;
    await db.execute(
      sql`update wallets set balance_kobo = balance_kobo + 123 where account_id = ${credited.id}::uuid and mode = 'live'`,
    );
    const [wallet] = await db
      .select({ id: wallets.id })
      .from(wallets)
      .where(and(eq(wallets.accountId, credited.id), eq(wallets.mode, "live")));
    const unbalanced = await server.admin.get("/admin/v1/reconciliation");
    expect(unbalanced.status).toBe(200);
    expect(unbalanced.json.data).toMatchObject({ balanced: false, wallets_checked: 4 });
    expect(unbalanced.json.data.discrepancies).toEqual([
      {
        wallet_id: wallet?.id,
        account_id: credited.id,
        mode: "live",
        balance_kobo: 500_123,
        ledger_balance_kobo: 500_000,
        held_kobo: 0,
        ledger_held_kobo: 0,
      },
    ]);
  });

  test("refused without the admin token: anonymous, a wrong token and an API key are all 401", async () => {
    const { testKey, liveKey } = await server.createAccount("Outsider");
    for (const client of [
      server.anonymous,
      server.client("not-the-admin-token"),
      server.client(testKey),
      server.client(liveKey),
    ]) {
      const res = await client.get("/admin/v1/reconciliation");
      expect(res.status).toBe(401);
      expect(res.json.code).toBe("UNAUTHENTICATED");
    }
  });

  test("account_id checks only that account's wallets: a planted ledger entry shows there and nowhere else", async () => {
    const clean = await fundedAccount(server, 300_000, "Clean Ltd");
    const planted = await fundedAccount(server, 200_000, "Planted Ltd");
    const db = server.database.handle.db;
    const [wallet] = await db
      .select({ id: wallets.id })
      .from(wallets)
      .where(and(eq(wallets.accountId, planted.id), eq(wallets.mode, "test")));
    // An entry no movement made: the ledger now says 777 kobo more than the wallet holds.
    await db.execute(
      sql`insert into ledger_entries (wallet_id, kind, amount_kobo, balance_delta_kobo, held_delta_kobo, balance_after_kobo, held_after_kobo, note)
          values (${wallet?.id}::uuid, 'credit', 777, 777, 0, 200777, 0, 'planted')`,
    );
    const own = await server.admin.get("/admin/v1/reconciliation", { query: { account_id: clean.id } });
    expect(own.status).toBe(200);
    expect(own.json.data).toMatchObject({ balanced: true, wallets_checked: 2, discrepancies: [] });
    const discrepancy = {
      wallet_id: wallet?.id,
      account_id: planted.id,
      mode: "test",
      balance_kobo: 200_000,
      ledger_balance_kobo: 200_777,
      held_kobo: 0,
      ledger_held_kobo: 0,
    };
    const other = await server.admin.get("/admin/v1/reconciliation", { query: { account_id: planted.id } });
    expect(other.json.data).toMatchObject({ balanced: false, wallets_checked: 2, discrepancies: [discrepancy] });
    const everyone = await server.admin.get("/admin/v1/reconciliation");
    expect(everyone.json.data.wallets_checked).toBe((await db.select({ id: wallets.id }).from(wallets)).length);
    expect(everyone.json.data.discrepancies).toContainEqual(discrepancy);
    expect(everyone.json.data.discrepancies.map((d: { account_id: string }) => d.account_id)).not.toContain(clean.id);
  });

  test("an unknown account is 404; a malformed account_id or an unknown parameter is 400 naming it", async () => {
    const unknown = await server.admin.get("/admin/v1/reconciliation", {
      query: { account_id: "00000000-0000-4000-8000-000000000000" },
    });
    expect([unknown.status, unknown.json.code]).toEqual([404, "NOT_FOUND"]);
    for (const [query, field] of [
      [{ account_id: "x" }, "account_id"],
      [{ account: "x" }, "account"],
    ] as const) {
      const res = await server.admin.get("/admin/v1/reconciliation", { query });
      expect(res.status).toBe(400);
      expect(res.json.data.errors[0].field).toBe(field);
    }
  });
});
