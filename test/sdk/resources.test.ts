import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { VendAdmin } from "../../sdk/src/admin.ts";
import { NotFoundError, PermissionError, ValidationError, VendClient } from "../../sdk/src/index.ts";
import { startTestServer, type TestServer, testAdminToken } from "../helpers/server.ts";

let server: TestServer;
let admin: VendAdmin;

beforeAll(async () => {
  server = await startTestServer();
  admin = new VendAdmin({ token: testAdminToken, baseUrl: server.url });
});
afterAll(() => server.close());

describe("the SDK from source against a real server", () => {
  test("an operator creates an account, credits its wallet and finds its orders", async () => {
    const created = await admin.accounts.create({ name: "sdk-resources" });
    const testKey = created.keys.find((key) => key.mode === "test")?.key ?? "";
    const liveKey = created.keys.find((key) => key.mode === "live")?.key ?? "";
    expect((await admin.accounts.get(created.account.id)).id).toBe(created.account.id);
    expect((await admin.keys.list(created.account.id)).map((key) => key.mode).sort()).toEqual(["live", "test"]);
    const credit = await admin.wallets.credit(created.account.id, { mode: "test", amount_kobo: 100_000, note: "sdk test" });
    expect(credit.wallet.balance_kobo).toBe(100_000);
    expect((await admin.providers.list()).providers.length).toBeGreaterThan(0);
    expect(await admin.operators.me()).toMatchObject({ role: "admin" });

    const vend = new VendClient({ apiKey: testKey, baseUrl: server.url });
    const queued = await vend.vends.create({ product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 });
    expect(queued.status).toBe("queued");
    expect((await admin.transactions.get(queued.reference)).reference).toBe(queued.reference);
    const found = await admin.transactions.list({ account_id: created.account.id }).toArray({ limit: 10 });
    expect(found.map((txn) => txn.reference)).toEqual([queued.reference]);

    const live = new VendClient({ apiKey: liveKey, baseUrl: server.url });
    expect(await live.wallet.fund({ amount_kobo: 100 }).catch((e: unknown) => e)).toMatchObject({
      constructor: PermissionError,
      code: "TEST_MODE_ONLY",
    });
  });

  test("a client reads the catalogue, verifies a meter, keeps its wallet, endpoints and keys", async () => {
    const account = await server.createAccount("sdk-client");
    const vend = new VendClient({ apiKey: account.testKey, baseUrl: server.url });
    expect((await vend.catalogue.networks()).length).toBeGreaterThan(0);
    expect((await vend.catalogue.products({ service: "data" })).length).toBeGreaterThan(0);
    expect((await vend.catalogue.services()).length).toBeGreaterThan(0);
    expect(await vend.catalogue.pricing({ network: "mtn" })).toBeTruthy();
    const meter = { network: "ikedc", meter_number: "45031234567", meter_type: "prepaid" as const };
    expect((await vend.verification.meter(meter)).customer_name).toBeTruthy();
    const unknown = await vend.verification.meter({ ...meter, meter_number: "45031230000" }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(NotFoundError);
    expect(unknown).toMatchObject({ code: "CUSTOMER_NOT_FOUND", status: 404, requestId: expect.any(String) });

    await vend.wallet.fund({ amount_kobo: 50_000 }, { idempotencyKey: "fund-once" });
    await vend.wallet.fund({ amount_kobo: 50_000 }, { idempotencyKey: "fund-once" });
    expect((await vend.wallet.balance()).balance_kobo).toBe(50_000);
    expect(await vend.wallet.statement().toArray({ limit: 10 })).toHaveLength(1);
    expect((await vend.wallet.setAlert({ low_balance_threshold_kobo: 1_000 })).low_balance_threshold_kobo).toBe(1_000);
    const reused = await vend.wallet.fund({ amount_kobo: 1 }, { idempotencyKey: "fund-once" }).catch((e: unknown) => e);
    expect(reused).toMatchObject({ constructor: ValidationError, code: "IDEMPOTENCY_KEY_REUSED", status: 422 });

    const endpoint = await vend.webhooks.endpoints.create({ url: "http://127.0.0.1:9/hooks" });
    expect(endpoint.secret).toStartWith("whsec_");
    expect((await vend.webhooks.endpoints.update(endpoint.id, { description: "orders" })).description).toBe("orders");
    expect((await vend.webhooks.endpoints.list()).map((e) => e.id)).toEqual([endpoint.id]);
    expect((await vend.webhooks.endpoints.rotateSecret(endpoint.id, { overlap_seconds: 0 })).secret).not.toBe(endpoint.secret);
    await vend.webhooks.endpoints.delete(endpoint.id);
    expect(await vend.webhooks.endpoints.get(endpoint.id).catch((e: unknown) => e)).toBeInstanceOf(NotFoundError);
    expect((await vend.events.list().firstPage()).items).toEqual([]);

    const keys = await vend.keys.list();
    expect(keys.filter((key) => key.current)).toHaveLength(1);
  });
});
