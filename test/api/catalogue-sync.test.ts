import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { HttpResponse, http } from "msw";
import type { components } from "../../generated/openapi-types.ts";
import type { Config } from "../../src/config.ts";
import { events, products } from "../../src/db/schema/index.ts";
import { webhookRunner } from "../../src/jobs/queues/delivery-queue.ts";
import { checkCatalogueDrift } from "../../src/jobs/tasks/catalogue-sync.ts";
import { loadConfig } from "../../src/load-config.ts";
import { clubkonnectTestConfig } from "../helpers/clubkonnect-mock.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { setupMockFetch, vtuTestConfig } from "../helpers/vtu-mock.ts";
import { startWebhookReceiver, verifyWebhook, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

type Schemas = components["schemas"];

/**
 * Catalogue sync against msw mocks of both providers' plan lists (VTpass-style `service-variations`, ClubKonnect's
 * data plan list), the real server, the real database, and a subscribed webhook endpoint.
 */
const network = setupMockFetch({ onUnhandledFrame: "bypass" });

type Variation = { variation_code: string; name: string; variation_amount: string; fixedPrice?: string };
let vtuLists: Record<string, Variation[]> = {};
let vtuAnswer: "lists" | "down" | "garbage" = "lists";
let ckNetworks: Record<string, { ID: string; PRODUCT: Record<string, string>[] }[]> = {};

const handlers = [
  http.get(`${vtuTestConfig.baseUrl}/api/service-variations`, ({ request }) => {
    if (vtuAnswer === "down") return new HttpResponse("upstream down", { status: 503 });
    const serviceID = new URL(request.url).searchParams.get("serviceID") ?? "";
    if (vtuAnswer === "garbage")
      return HttpResponse.json({ response_description: "000", content: { serviceID, variations: "n/a" } });
    // Older VTpass answers spell it `varations`; gotv's list is served that way.
    const key = serviceID === "gotv" ? "varations" : "variations";
    return HttpResponse.json({
      response_description: "000",
      content: { ServiceName: serviceID, serviceID, [key]: vtuLists[serviceID] ?? [] },
    });
  }),
  http.get(`${clubkonnectTestConfig.baseUrl}/APIDatabundlePlansV2.asp`, () => HttpResponse.json({ MOBILE_NETWORK: ckNetworks })),
];

function resetLists(): void {
  vtuAnswer = "lists";
  vtuLists = {
    "mtn-data": [
      { variation_code: "mtn-1gb-daily", name: "MTN 1GB - 1 day", variation_amount: "550.00", fixedPrice: "Yes" },
      { variation_code: "mtn-2gb-monthly", name: "MTN 2GB - 30 days", variation_amount: "1500.00", fixedPrice: "Yes" },
      { variation_code: "mtn-40gb-monthly", name: "MTN 40GB - 30 days", variation_amount: "11000.00", fixedPrice: "Yes" },
    ],
    dstv: [{ variation_code: "dstv-padi", name: "DStv Padi N4,600", variation_amount: "4600.00", fixedPrice: "Yes" }],
    gotv: [{ variation_code: "gotv-max", name: "GOtv Max", variation_amount: "7200", fixedPrice: "No" }],
  };
  ckNetworks = {
    MTN: [{ ID: "01", PRODUCT: [{ PRODUCT_ID: "1000.1", PRODUCT_NAME: "1 GB - 1 day", PRODUCT_AMOUNT: "480.00" }] }],
    Glo: [{ ID: "02", PRODUCT: [{ PRODUCT_ID: "5000.0", PRODUCT_NAME: "5 GB - 30 days", PRODUCT_AMOUNT: "1500.00" }] }],
    Airtel: [{ ID: "04", PRODUCT: [] }],
    "9mobile": [{ ID: "03", PRODUCT: [{ PRODUCT_ID: "1000.1", PRODUCT_NAME: "1 GB - 1 day", PRODUCT_AMOUNT: "320.00" }] }],
  };
}

const defaults = loadConfig({});
const config: Partial<Config> = {
  providers: { ...defaults.providers, vtu: vtuTestConfig, clubkonnect: clubkonnectTestConfig },
  routing: {
    ...defaults.routing,
    productCodes: {
      vtu: {
        "mtn-data-1gb-1d": "mtn-1gb-daily",
        "mtn-data-2gb-30d": "mtn-2gb-monthly",
        "airtel-data-2gb-30d": "airtel-2gb-monthly",
        "glo-data-5gb-30d": "glo-5gb-monthly",
        "dstv-padi": "dstv-padi",
      },
      clubkonnect: { "glo-data-5gb-30d": "5000.0", "airtel-data-2gb-30d": "2000.0", "9mobile-data-1gb-1d": "1000.1" },
    },
  },
};

let server: TestServer;
let receiver: WebhookReceiver;
let subscriber: { id: string; secret: string };
const db = () => server.database.handle.db;

beforeAll(async () => {
  network.enable();
  network.use(...handlers);
  resetLists();
  server = await startTestServer(config);
  receiver = startWebhookReceiver();
  const account = await server.createAccount("Catalogue watcher");
  const created = await server.client(account.testKey).post("/api/v1/webhook-endpoints", { url: `${receiver.url}/hooks` });
  expect(created.status).toBe(201);
  subscriber = { id: account.id, secret: created.json.data.secret };
}, 60_000);
afterEach(() => resetLists());
afterAll(async () => {
  network.disable();
  await receiver.close();
  await server.close();
});

const dryRun = (name: string) => server.admin.get(`/admin/v1/providers/${name}/catalogue-sync`);
const apply = (name: string, body?: unknown) => server.admin.post(`/admin/v1/providers/${name}/catalogue-sync`, body);

async function product(code: string) {
  const [row] = await db().select().from(products).where(eq(products.code, code));
  if (!row) throw new Error(`no product ${code}`);
  return row;
}

const catalogueEvents = () => db().select().from(events).where(eq(events.type, "catalogue.updated"));

describe("catalogue sync", () => {
  test("a dry run lists exactly the differences; applying them moves updated_at, sends catalogue.updated, is audited; a second run has nothing to apply", async () => {
    const before = await Promise.all(["airtel-data-2gb-30d", "dstv-padi", "mtn-data-1gb-1d", "glo-data-5gb-30d"].map(product));
    const found = await dryRun("vtu");
    expect(found.status).toBe(200);
    const sync: Schemas["CatalogueSync"] = found.json.data;
    expect(sync).toEqual({
      provider: "vtu",
      services: ["data", "cable"],
      plans_listed: 4,
      new_plans: [
        {
          plan_code: "mtn-40gb-monthly",
          name: "MTN 40GB - 30 days",
          service: "data",
          network: "mtn",
          face_value_kobo: 1_100_000,
        },
      ],
      price_changes: [
        { product_code: "dstv-padi", plan_code: "dstv-padi", price_kobo: 440_000, face_value_kobo: 460_000 },
        { product_code: "mtn-data-1gb-1d", plan_code: "mtn-1gb-daily", price_kobo: 50_000, face_value_kobo: 55_000 },
      ],
      dropped: [
        { product_code: "airtel-data-2gb-30d", plan_code: "airtel-2gb-monthly", action: "take_off_sale", delivered_by: [] },
        { product_code: "glo-data-5gb-30d", plan_code: "glo-5gb-monthly", action: "keep", delivered_by: ["clubkonnect"] },
      ],
      in_sync: false,
      fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
      checked_at: expect.any(String),
    });
    // A dry run changes nothing.
    expect(await Promise.all(before.map((row) => product(row.code)))).toEqual(before);
    expect((await dryRun("vtu")).json.data.fingerprint).toBe(sync.fingerprint);

    const applied = await apply("vtu", { fingerprint: sync.fingerprint, note: "VTpass list of today" });
    expect(applied.status).toBe(200);
    const result: Schemas["CatalogueSyncResult"] = applied.json.data;
    expect(result.sync).toMatchObject({ price_changes: sync.price_changes, dropped: sync.dropped });
    expect(result.applied.map((p) => [p.code, p.price_kobo, p.active])).toEqual([
      ["airtel-data-2gb-30d", 150_000, false],
      ["dstv-padi", 460_000, true],
      ["mtn-data-1gb-1d", 55_000, true],
    ]);
    for (const code of ["airtel-data-2gb-30d", "dstv-padi", "mtn-data-1gb-1d"]) {
      const was = before.find((row) => row.code === code);
      const now = await product(code);
      expect(now.updatedAt.getTime()).toBeGreaterThan(was?.updatedAt.getTime() ?? Number.POSITIVE_INFINITY);
    }
    // Kept on sale (ClubKonnect still lists it) and never deleted.
    expect(await product("glo-data-5gb-30d")).toEqual(before[3] as Awaited<ReturnType<typeof product>>);

    // One catalogue.updated for the subscribed account, carrying the three changes, delivered signed.
    const written = await catalogueEvents();
    expect(written.map((e) => e.accountId)).toEqual([subscriber.id]);
    const data = written[0]?.payload.data as Schemas["CatalogueUpdated"];
    expect(data.products.map((c) => [c.product.code, c.changes])).toEqual([
      ["airtel-data-2gb-30d", ["active"]],
      ["dstv-padi", ["price_kobo"]],
      ["mtn-data-1gb-1d", ["price_kobo"]],
    ]);
    expect(await webhookRunner(server.deps, "sync-test").tick()).toBe(1);
    const [delivered] = await receiver.waitFor(1);
    if (!delivered) throw new Error("no webhook delivered");
    expect(verifyWebhook(subscriber.secret, delivered)).toEqual(written[0]?.payload);

    // Audited in the change's transaction: the operator, the provider, the products before and after, the note.
    const audit = await server.admin.get("/admin/v1/audit?action=applyCatalogueSync");
    expect(audit.status).toBe(200);
    const [entry] = audit.json.data.items;
    expect(entry).toMatchObject({
      action: "applyCatalogueSync",
      target_type: "provider",
      target_id: "vtu",
      note: "VTpass list of today",
    });
    expect((entry.before as Schemas["Product"][]).map((p) => [p.code, p.price_kobo, p.active])).toEqual([
      ["airtel-data-2gb-30d", 150_000, true],
      ["dstv-padi", 440_000, true],
      ["mtn-data-1gb-1d", 50_000, true],
    ]);
    expect(entry.after).toEqual(result);

    // The second run: nothing to apply. What remains is information: the plan the catalogue does not sell, and a
    // dropped plan another provider still delivers.
    const again = (await dryRun("vtu")).json.data as Schemas["CatalogueSync"];
    expect(again).toMatchObject({ in_sync: true, price_changes: [], new_plans: sync.new_plans });
    expect(again.dropped).toEqual([sync.dropped[1] as Schemas["CatalogueSyncDrop"]]);
    const noop = await apply("vtu", { fingerprint: again.fingerprint });
    expect(noop.status).toBe(200);
    expect(noop.json.data.applied).toEqual([]);
    expect(await catalogueEvents()).toHaveLength(1);
  });

  test("ClubKonnect's data plan list: a price change applied; a product already off sale is not reported as dropped", async () => {
    const found = await dryRun("clubkonnect");
    expect(found.status).toBe(200);
    expect(found.json.data).toMatchObject({
      provider: "clubkonnect",
      services: ["data"],
      plans_listed: 3,
      new_plans: [{ plan_code: "1000.1", name: "1 GB - 1 day", service: "data", network: "mtn", face_value_kobo: 48_000 }],
      price_changes: [{ product_code: "9mobile-data-1gb-1d", plan_code: "1000.1", price_kobo: 30_000, face_value_kobo: 32_000 }],
      dropped: [],
      in_sync: false,
    });
    const applied = await apply("clubkonnect");
    expect(applied.status).toBe(200);
    expect(applied.json.data.applied.map((p: Schemas["Product"]) => [p.code, p.price_kobo])).toEqual([
      ["9mobile-data-1gb-1d", 32_000],
    ]);
    expect((await dryRun("clubkonnect")).json.data).toMatchObject({ in_sync: true, price_changes: [], dropped: [] });
  });

  test("a provider that is down or answers garbage: 502, nothing applied", async () => {
    vtuLists["mtn-data"] = [{ variation_code: "mtn-1gb-daily", name: "MTN 1GB", variation_amount: "600.00" }];
    const before = await product("mtn-data-1gb-1d");
    for (const answer of ["down", "garbage"] as const) {
      vtuAnswer = answer;
      for (const res of [await dryRun("vtu"), await apply("vtu")]) {
        expect(res.status).toBe(502);
        expect(res.json).toMatchObject({ success: false, code: "PROVIDER_ERROR", data: null });
        expect(res.json.message).toContain("nothing was compared or changed");
      }
    }
    expect(await product("mtn-data-1gb-1d")).toEqual(before);
  });

  test("a list that changed since the dry run is refused 409 and nothing is applied", async () => {
    const sync = (await dryRun("vtu")).json.data as Schemas["CatalogueSync"];
    expect(sync.in_sync).toBe(true);
    vtuLists["mtn-data"] = [
      { variation_code: "mtn-1gb-daily", name: "MTN 1GB", variation_amount: "600.00" },
      { variation_code: "mtn-2gb-monthly", name: "MTN 2GB", variation_amount: "1500.00" },
    ];
    const before = await product("mtn-data-1gb-1d");
    const refused = await apply("vtu", { fingerprint: sync.fingerprint });
    expect(refused.status).toBe(409);
    expect(refused.json).toMatchObject({ code: "CONFLICT", data: null });
    expect(refused.json.message).toContain("nothing was applied");
    expect(await product("mtn-data-1gb-1d")).toEqual(before);
  });

  test.each([
    ["a fingerprint that is not one", { fingerprint: "abc" }, "fingerprint"],
    ["an unknown field", { apply: true }, "apply"],
    ["a note too long", { note: "x".repeat(501) }, "note"],
  ])("%s: 400 naming the field, nothing sent or changed", async (_, body, field) => {
    const res = await apply("vtu", body);
    expect(res.status).toBe(400);
    expect(res.json.data.errors.map((e: { field: string }) => e.field)).toEqual([field]);
  });

  test("a provider that cannot list plans is 400 naming it; an unknown one 404", async () => {
    const sandbox = await dryRun("sandbox");
    expect(sandbox.status).toBe(400);
    expect(sandbox.json.data.errors).toEqual([
      { field: "name", message: "sandbox cannot list its plans (providers that can: vtu, clubkonnect)" },
    ]);
    expect((await apply("sandbox")).status).toBe(400);
    expect((await dryRun("nope")).status).toBe(404);
    expect((await apply("nope")).status).toBe(404);
  });

  test("the scheduled check reports drift as one anomaly per distinct set and a gauge, and applies nothing", async () => {
    vtuLists["mtn-data"] = [
      { variation_code: "mtn-1gb-daily", name: "MTN 1GB", variation_amount: "600.00" },
      { variation_code: "mtn-2gb-monthly", name: "MTN 2GB", variation_amount: "1500.00" },
    ];
    const before = await product("mtn-data-1gb-1d");
    expect(await checkCatalogueDrift(server.deps)).toBe(2);
    expect(await checkCatalogueDrift(server.deps)).toBe(2);
    const listed = await server.admin.get("/admin/v1/anomalies?kind=catalogue_drift");
    expect(listed.status).toBe(200);
    const items = listed.json.data.items as Schemas["Anomaly"][];
    expect(items.map((a) => a.provider).sort()).toEqual(["clubkonnect", "vtu"]);
    const vtu = items.find((a) => a.provider === "vtu");
    expect(vtu?.reference).toMatch(/^sync:[0-9a-f]{64}$/);
    expect(vtu?.message).toContain("1 price change(s)");
    expect(await product("mtn-data-1gb-1d")).toEqual(before);
    const scrape = await server.deps.metrics.scrape();
    expect(scrape).toContain('vend_catalogue_drift{provider="vtu",kind="price_change"} 1');
    expect(scrape).toContain('vend_catalogue_sync_checks_total{provider="vtu",outcome="drift"} 2');

    // A different set is a new anomaly.
    vtuLists["mtn-data"] = [];
    await checkCatalogueDrift(server.deps);
    const more = (await server.admin.get("/admin/v1/anomalies?kind=catalogue_drift&provider=vtu")).json.data.items;
    expect(more).toHaveLength(2);
  });
});
