import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq, inArray } from "drizzle-orm";
import { processingRunner } from "../../src/background.ts";
import { auditEntries, events, ledgerEntries, pricePlans, transactions } from "../../src/db/schema/index.ts";
import { webhookRunner } from "../../src/jobs/queues/delivery-queue.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { createVtuProvider } from "../../src/providers/vtu/client.ts";
import { idem } from "../helpers/accounts.ts";
import type { HttpClient, HttpResult } from "../helpers/http.ts";
import { fastProcessing } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { setupMockFetch, VtuBook, vtuHandlers, vtuTestConfig } from "../helpers/vtu-mock.ts";
import { startWebhookReceiver, verifyWebhook, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

/**
 * Price plans over real HTTP, a real database and the real VTU adapter against an msw upstream. Money: each
 * live wallet is credited once by an operator; every order completes, so each wallet's balance must fall by
 * exactly the sum of the prices the test works out itself (face value less the plan's discount, rounded down
 * to whole kobo), nothing stays held, and every wallet equals its ledger (reconcileWallets). No money moves in
 * the plan changes: those tests count events and deliveries.
 */
const network = setupMockFetch({ onUnhandledFrame: "bypass" });
const book = new VtuBook();
let server: TestServer;
let receiver: WebhookReceiver;
const credit = 10_000_000;
const db = () => server.database.handle.db;

interface Reseller {
  id: string;
  live: HttpClient;
  test: HttpClient;
  endpointSecret: string;
}
let onStandard: Reseller;
let onGold: Reseller;

async function reseller(name: string, path: string): Promise<Reseller> {
  const account = await server.createAccount(name);
  const credited = await server.admin.post(
    `/admin/v1/accounts/${account.id}/wallet/credit`,
    { mode: "live", amount_kobo: credit, note: "float" },
    idem(),
  );
  expect(credited.status).toBe(200);
  const test = server.client(account.testKey);
  const endpoint = await test.post("/api/v1/webhook-endpoints", { url: `${receiver.url}${path}` });
  expect(endpoint.status).toBe(201);
  return { id: account.id, live: server.client(account.liveKey), test, endpointSecret: endpoint.json.data.secret };
}

/** The plan the test gives `gold`, and the list discounts the seed gives the products it vends. */
const gold = [
  { scope: "service", code: "data", discount_bps: 300 },
  { scope: "network", code: "mtn", discount_bps: 200 },
  { scope: "product", code: "mtn-airtime", discount_bps: 450 },
];
const listBps = { "mtn-airtime": 300, "ikedc-prepaid": 50 } as const;
/** What the wallet pays: face value less `bps` basis points, the discount rounded down to whole kobo. */
const expectedPrice = (face: number, bps: number) => face - Math.floor((face * bps) / 10_000);

beforeAll(async () => {
  network.enable();
  network.use(...vtuHandlers({ book, pay: { kind: "deliver" } }));
  server = await startTestServer(fastProcessing({ providers: { vtu: vtuTestConfig } }), {
    liveProviders: [createVtuProvider(vtuTestConfig)],
  });
  receiver = startWebhookReceiver();
  onStandard = await reseller("Standard Stores", "/standard");
  onGold = await reseller("Gold Stores", "/gold");
}, 60_000);
afterAll(async () => {
  await receiver.close();
  await server.close();
  network.disable();
});

const admin = (method: string, path: string, body?: unknown) => server.admin.request(method, path, body);
const movePlan = (accountId: string, plan: string) => admin("PUT", `/admin/v1/accounts/${accountId}/price-plan`, { plan });
const processAll = async () => {
  const runner = processingRunner({ ...server.deps, apiBaseUrl: server.url }, "plans-worker");
  while ((await runner.tick()) > 0) {}
};
const deliverWebhooks = () => webhookRunner(server.deps, "plans-test").tick();

async function catalogueEventsOf(accountId: string) {
  return db()
    .select()
    .from(events)
    .where(and(eq(events.type, "catalogue.updated"), eq(events.accountId, accountId)))
    .orderBy(events.createdAt, events.id);
}

interface AnnouncedProducts {
  products: { product: { code: string; discount_bps: number }; changes: string[]; previous: { discount_bps: number } }[];
}
/** The products a catalogue.updated event lists. */
function announced(event: { payload: Record<string, unknown> } | undefined): AnnouncedProducts["products"] {
  if (!event) throw new Error("no catalogue.updated event");
  return (event.payload.data as AnnouncedProducts).products;
}

function expectInvalid(res: HttpResult, field: string) {
  expect(res.status).toBe(400);
  expect(res.json.code).toBe("VALIDATION_FAILED");
  expect(res.json.data.errors.map((e: { field: string }) => e.field)).toContain(field);
}

describe("refusals: 400 naming the field (or 404, 409), nothing written", () => {
  const discount = (scope: string, code: string, discount_bps: number) => ({ scope, code, discount_bps });
  test.each([
    ["bps above 10000", { name: "bad", discounts: [discount("service", "data", 10_001)] }, "discounts[0].discount_bps"],
    ["negative bps", { name: "bad", discounts: [discount("service", "data", -1)] }, "discounts[0].discount_bps"],
    ["bps not an integer", { name: "bad", discounts: [discount("service", "data", 1.5)] }, "discounts[0].discount_bps"],
    ["unknown scope", { name: "bad", discounts: [discount("region", "lagos", 100)] }, "discounts[0].scope"],
    ["unknown service code", { name: "bad", discounts: [discount("service", "gas", 100)] }, "discounts[0].code"],
    [
      "unknown network code",
      { name: "bad", discounts: [discount("service", "data", 1), discount("network", "etisalat", 100)] },
      "discounts[1].code",
    ],
    ["unknown product code", { name: "bad", discounts: [discount("product", "mtn-data-99tb", 100)] }, "discounts[0].code"],
    [
      "a scope and code twice",
      { name: "bad", discounts: [discount("network", "mtn", 1), discount("network", "mtn", 2)] },
      "discounts[1]",
    ],
    ["a name with capitals", { name: "Gold!" }, "name"],
    ["an unknown field", { name: "bad", colour: "gold" }, "colour"],
  ])("create: %s", async (_, body, field) => {
    expectInvalid(await admin("POST", "/admin/v1/price-plans", body), field);
  });

  test("update and move refusals; nothing changed, nothing audited", async () => {
    expectInvalid(
      await admin("PATCH", "/admin/v1/price-plans/standard", { discounts: [discount("product", "nope", 1)] }),
      "discounts[0].code",
    );
    expect((await admin("PATCH", "/admin/v1/price-plans/standard", {})).status).toBe(400);
    expect((await admin("PATCH", "/admin/v1/price-plans/no-such-plan", { description: "x" })).status).toBe(404);
    expectInvalid(await movePlan(onGold.id, "no-such-plan"), "plan");
    expectInvalid(await admin("PUT", `/admin/v1/accounts/${onGold.id}/price-plan`, {}), "plan");
    expect((await movePlan("00000000-0000-4000-8000-000000000000", "standard")).status).toBe(404);

    const plans = await db().select().from(pricePlans);
    expect(plans.map((p) => p.name)).toEqual(["standard"]);
    const account = await admin("GET", `/admin/v1/accounts/${onGold.id}`);
    expect(account.json.data.price_plan).toBe("standard");
    const audited = await db()
      .select()
      .from(auditEntries)
      .where(inArray(auditEntries.action, ["createPricePlan", "updatePricePlan", "setAccountPricePlan"]));
    expect(audited).toEqual([]);
    expect(await catalogueEventsOf(onGold.id)).toEqual([]);
  });
});

describe("plans priced at acceptance", () => {
  test("create gold (201, audited), a second gold is 409; standard is listed with every account on it", async () => {
    const created = await admin("POST", "/admin/v1/price-plans", { name: "gold", description: "Big resellers", discounts: gold });
    expect(created.status).toBe(201);
    expect(created.json.data).toMatchObject({
      name: "gold",
      description: "Big resellers",
      discounts: gold,
      account_count: 0,
    });
    expect((await admin("POST", "/admin/v1/price-plans", { name: "gold" })).status).toBe(409);
    const listed = await admin("GET", "/admin/v1/price-plans");
    expect(listed.status).toBe(200);
    expect(listed.json.data.map((p: { name: string }) => p.name)).toEqual(["gold", "standard"]);
    expect(listed.json.data[1]).toMatchObject({ name: "standard", discounts: [], account_count: 2 });
    const [entry] = await db().select().from(auditEntries).where(eq(auditEntries.action, "createPricePlan"));
    expect(entry).toMatchObject({ targetType: "price_plan", targetId: "gold", operatorName: "ADMIN_TOKEN" });
  });

  test("moving an account sends one catalogue.updated to its endpoint only, and shows the plan on the account", async () => {
    const standardTag = (await onGold.test.get("/api/v1/pricing")).headers.get("etag");
    const moved = await movePlan(onGold.id, "gold");
    expect(moved.status).toBe(200);
    expect(moved.json.data).toMatchObject({ id: onGold.id, price_plan: "gold" });
    expect((await admin("GET", `/admin/v1/accounts/${onGold.id}`)).json.data.price_plan).toBe("gold");

    const [event, ...more] = await catalogueEventsOf(onGold.id);
    expect(more).toEqual([]);
    expect(await catalogueEventsOf(onStandard.id)).toEqual([]);
    const changed = announced(event);
    const airtime = changed.find((c) => c.product.code === "mtn-airtime");
    expect(airtime).toMatchObject({ changes: ["discount_bps"], product: { discount_bps: 450 }, previous: { discount_bps: 300 } });
    const mtnData = changed.find((c) => c.product.code === "mtn-data-1gb-1d");
    expect(mtnData).toMatchObject({ product: { discount_bps: 200 }, previous: { discount_bps: 0 } });
    // Nothing gold leaves alone is listed (electricity and cable keep their list discounts).
    expect(changed.some((c) => c.product.code.startsWith("ikedc") || c.product.code.startsWith("dstv"))).toBe(false);

    expect(await deliverWebhooks()).toBe(1);
    const [delivered] = await receiver.waitFor(1);
    expect(delivered?.path).toBe("/gold");
    if (!delivered) throw new Error("nothing delivered");
    expect(verifyWebhook(onGold.endpointSecret, delivered)).toEqual(event?.payload);

    const [audit] = await db().select().from(auditEntries).where(eq(auditEntries.action, "setAccountPricePlan"));
    expect(audit).toMatchObject({ targetType: "account", targetId: onGold.id, before: { price_plan: "standard" } });
    // The pricing answer is now gold's: another body, another tag.
    expect((await onGold.test.get("/api/v1/pricing")).headers.get("etag")).not.toBe(standardTag);
    // A move to the plan it is on changes nothing and sends nothing.
    expect((await movePlan(onGold.id, "gold")).status).toBe(200);
    expect(await catalogueEventsOf(onGold.id)).toHaveLength(1);
  });

  test("the catalogue and pricing show each caller its own prices; their tags differ", async () => {
    const pricing = async (who: Reseller) => {
      const res = await who.live.get("/api/v1/pricing", { query: { network: "mtn" } });
      expect(res.status).toBe(200);
      return res;
    };
    const [standard, goldPricing] = [await pricing(onStandard), await pricing(onGold)];
    expect(standard.headers.get("etag")).not.toBe(goldPricing.headers.get("etag"));
    const item = (res: HttpResult, code: string) => res.json.data.find((i: { product_code: string }) => i.product_code === code);
    expect(item(standard, "mtn-airtime")).toMatchObject({ discount_bps: 300, price_kobo: null });
    expect(item(goldPricing, "mtn-airtime")).toMatchObject({ discount_bps: 450, price_kobo: null });
    expect(item(standard, "mtn-data-1gb-1d")).toMatchObject({ discount_bps: 0, price_kobo: 50_000 });
    expect(item(goldPricing, "mtn-data-1gb-1d")).toMatchObject({ discount_bps: 200, price_kobo: expectedPrice(50_000, 200) });
    // The other plan's tag does not answer 304.
    const crossed = await onStandard.live.get("/api/v1/pricing", {
      query: { network: "mtn" },
      headers: { "if-none-match": goldPricing.headers.get("etag") ?? "" },
    });
    expect(crossed.status).toBe(200);

    const products = await onGold.live.get("/api/v1/catalogue/products", { query: { service: "data", network: "airtel" } });
    for (const product of products.json.data) expect(product.discount_bps).toBe(300);
    const standardProducts = await onStandard.live.get("/api/v1/catalogue/products", {
      query: { service: "data", network: "airtel" },
    });
    expect(standardProducts.headers.get("etag")).not.toBe(products.headers.get("etag"));
  });

  test("two accounts on two plans vend the same products and each pays its plan's price; wallets reconcile", async () => {
    const catalogue = (await onStandard.live.get("/api/v1/catalogue/products")).json.data as {
      code: string;
      price_kobo: number | null;
    }[];
    const faceOf = (code: string) => catalogue.find((p) => p.code === code)?.price_kobo ?? 0;
    const bouquet = catalogue.find((p) => p.code.startsWith("dstv-"))?.code ?? "";
    // Face values, and the discount each plan gives (gold: product, then network, then service, then list).
    const orders = [
      {
        path: "/api/v1/vend",
        body: { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_033 },
        face: 10_033,
        standard: listBps["mtn-airtime"],
        gold: 450,
      },
      {
        path: "/api/v1/vend",
        body: { product_code: "mtn-data-1gb-1d", phone_number: "08031234567" },
        face: faceOf("mtn-data-1gb-1d"),
        standard: 0,
        gold: 200,
      },
      {
        path: "/api/v1/vend",
        body: { product_code: "airtel-data-2gb-2d", phone_number: "08021234567" },
        face: faceOf("airtel-data-2gb-2d"),
        standard: 0,
        gold: 300,
      },
      {
        path: "/api/v1/bills/electricity",
        body: { network: "ikedc", meter_number: "45031234567", amount_kobo: 123_457 },
        face: 123_457,
        standard: listBps["ikedc-prepaid"],
        gold: listBps["ikedc-prepaid"],
      },
      {
        path: "/api/v1/bills/cable",
        body: { biller: "dstv", smartcard_number: "7031234567", product_code: bouquet },
        face: faceOf(bouquet),
        standard: 0,
        gold: 0,
      },
    ] as const;
    const expected = { standard: 0, gold: 0 };
    for (const [plan, who] of [
      ["standard", onStandard],
      ["gold", onGold],
    ] as const) {
      for (const order of orders) {
        const res = await who.live.post(order.path, order.body, idem());
        expect(res.status).toBe(202);
        const price = expectedPrice(order.face, order[plan]);
        expect(res.json.data).toMatchObject({ amount_kobo: order.face, price_kobo: price });
        expected[plan] += price;
      }
    }
    expect(expected.gold).toBeLessThan(expected.standard);
    // A batch is priced the same way: gold's airtime at 450 bps.
    const batch = await onGold.live.post(
      "/api/v1/vend/batches",
      { orders: [{ service: "airtime", product_code: "mtn-airtime", phone_number: "08031234568", amount_kobo: 20_001 }] },
      idem(),
    );
    expect(batch.status).toBe(202);
    expected.gold += expectedPrice(20_001, 450);

    await processAll();
    for (const [plan, who] of [
      ["standard", onStandard],
      ["gold", onGold],
    ] as const) {
      const rows = await db().select().from(transactions).where(eq(transactions.accountId, who.id));
      expect(rows.every((row) => row.status === "successful")).toBe(true);
      const wallet = (await who.live.get("/api/v1/wallet")).json.data;
      expect(wallet).toMatchObject({ balance_kobo: credit - expected[plan], held_kobo: 0 });
      const captures = await db()
        .select()
        .from(ledgerEntries)
        .where(
          and(
            inArray(
              ledgerEntries.transactionId,
              rows.map((row) => row.id),
            ),
            eq(ledgerEntries.kind, "capture"),
          ),
        );
      expect(captures).toHaveLength(rows.length);
      expect(captures.reduce((sum, entry) => sum - entry.balanceDeltaKobo, 0)).toBe(expected[plan]);
    }
    // The provider was paid face value for every order, whatever the plan.
    expect(book.transactions.size).toBe(orders.length * 2 + 1);
    expect(await reconcileWallets(db())).toEqual([]);
  });

  test("changing gold's discounts: one catalogue.updated to gold's account only, and its next order is priced anew", async () => {
    const goldBefore = (await catalogueEventsOf(onGold.id)).length;
    const standardBefore = (await catalogueEventsOf(onStandard.id)).length;
    const updated = await admin("PATCH", "/admin/v1/price-plans/gold", {
      discounts: [...gold.filter((d) => d.code !== "mtn-airtime"), { scope: "product", code: "mtn-airtime", discount_bps: 500 }],
      note: "October volume",
    });
    expect(updated.status).toBe(200);
    expect(updated.json.data.discounts).toContainEqual({ scope: "product", code: "mtn-airtime", discount_bps: 500 });

    const goldEvents = await catalogueEventsOf(onGold.id);
    expect(goldEvents).toHaveLength(goldBefore + 1);
    expect(await catalogueEventsOf(onStandard.id)).toHaveLength(standardBefore);
    const products = announced(goldEvents.at(-1));
    expect(products).toEqual([
      expect.objectContaining({
        product: expect.objectContaining({ code: "mtn-airtime", discount_bps: 500 }),
        changes: ["discount_bps"],
        previous: expect.objectContaining({ discount_bps: 450 }),
      }),
    ]);
    const [audit] = await db().select().from(auditEntries).where(eq(auditEntries.action, "updatePricePlan"));
    expect(audit).toMatchObject({ targetType: "price_plan", targetId: "gold", note: "October volume" });
    expect((audit?.before as { discounts?: unknown[] } | undefined)?.discounts).toContainEqual({
      scope: "product",
      code: "mtn-airtime",
      discount_bps: 450,
    });

    const res = await onGold.live.post(
      "/api/v1/vend",
      { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 9_999 },
      idem(),
    );
    expect(res.json.data.price_kobo).toBe(expectedPrice(9_999, 500));
    // A description-only edit sends nothing.
    expect((await admin("PATCH", "/admin/v1/price-plans/gold", { description: "Biggest resellers" })).status).toBe(200);
    expect(await catalogueEventsOf(onGold.id)).toHaveLength(goldBefore + 1);
    await processAll();
    expect(await reconcileWallets(db())).toEqual([]);
  });

  test("a product's list discount change is announced to accounts that pay it, not to gold's, whose plan sets its own", async () => {
    const goldBefore = (await catalogueEventsOf(onGold.id)).length;
    const standardBefore = (await catalogueEventsOf(onStandard.id)).length;
    const changed = await admin("PATCH", "/admin/v1/products/mtn-airtime", { discount_bps: 310 });
    expect(changed.status).toBe(200);
    const standardEvents = await catalogueEventsOf(onStandard.id);
    expect(standardEvents).toHaveLength(standardBefore + 1);
    expect(announced(standardEvents.at(-1))).toEqual([
      expect.objectContaining({
        product: expect.objectContaining({ code: "mtn-airtime", discount_bps: 310 }),
        changes: ["discount_bps"],
      }),
    ]);
    expect(await catalogueEventsOf(onGold.id)).toHaveLength(goldBefore);
    const price = (await onGold.live.get("/api/v1/pricing", { query: { network: "mtn", service: "airtime" } })).json.data[0];
    expect(price).toMatchObject({ product_code: "mtn-airtime", discount_bps: 500 });
  });
});
