import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { priceFor } from "../../src/catalogue/catalogue-listing.ts";
import { products } from "../../src/db/schema/index.ts";
import { findProduct, type ProductRow } from "../../src/orders/product-cache.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let testKey: string;
let liveKey: string;

beforeAll(async () => {
  server = await startTestServer();
  ({ testKey, liveKey } = await server.createAccount("Catalogue Ltd"));
}, 60_000); // an in-memory PGlite migrates slowly on a busy machine
afterAll(() => server.close());

const get = (path: string, query: Record<string, string> = {}, key = testKey) => server.client(key).get(path, { query });
const patchProduct = (code: string, body: unknown) => server.admin.request("PATCH", `/admin/v1/products/${code}`, body);
const codes = (items: { code?: string; product_code?: string }[]) => items.map((i) => i.code ?? i.product_code);

describe("priceFor", () => {
  const product = (overrides: Partial<ProductRow>): ProductRow => ({
    code: "p",
    id: "00000000-0000-0000-0000-000000000000",
    name: "P",
    service: "airtime",
    network: "mtn",
    kind: "range",
    priceKobo: null,
    minAmountKobo: 5000,
    maxAmountKobo: 5000000,
    discountBps: 0,
    requestedMb: null,
    validityDays: null,
    meterType: null,
    active: true,
    sortOrder: 0,
    updatedAt: new Date(0),
    ...overrides,
  });

  test.each([
    [300, 10000, 9700],
    [300, 10033, 9733], // discount 300.99 kobo rounds down to 300
    [340, 5099, 4926], // 173.366 → 173
    [1, 9999, 9999], // 0.9999 → 0: no discount below one kobo
    [0, 12345, 12345],
    [10000, 5000, 0],
  ])("range product, %i bps of %i kobo → %i", (discountBps, amount, price) => {
    expect(priceFor(product({ discountBps }), amount)).toBe(price);
  });

  test("a fixed product costs its price whatever the amount", () => {
    expect(priceFor(product({ kind: "fixed", priceKobo: 50000, discountBps: 500 }), 10000)).toBe(50000);
  });
});

describe("GET /api/v1/catalogue/services", () => {
  test("lists the four services in catalogue order", async () => {
    const res = await get("/api/v1/catalogue/services");
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual([
      { code: "airtime", name: "Airtime" },
      { code: "data", name: "Data bundles" },
      { code: "cable", name: "Cable TV" },
      { code: "electricity", name: "Electricity" },
    ]);
  });
});

describe("GET /api/v1/catalogue/networks", () => {
  const telecoms = ["mtn", "airtel", "glo", "9mobile"];
  const billers = ["dstv", "gotv", "startimes", "showmax"];
  const discos = ["ikedc", "ekedc", "aedc", "phed", "ibedc", "kedco", "eedc", "jed", "kaedco", "bedc", "yedc"];

  test("unfiltered: every network, disco and biller, as a plain array", async () => {
    const res = await get("/api/v1/catalogue/networks");
    expect(res.status).toBe(200);
    expect(codes(res.json.data)).toEqual([...telecoms, ...billers, ...discos]);
    expect(res.json.data[0]).toEqual({ code: "mtn", name: "MTN", service: "airtime" });
  });

  test.each([
    ["airtime", telecoms],
    ["data", telecoms],
    ["cable", billers],
    ["electricity", discos],
  ])("service=%s", async (service, expected) => {
    const res = await get("/api/v1/catalogue/networks", { service });
    expect(res.status).toBe(200);
    expect(codes(res.json.data)).toEqual(expected);
  });

  test("an unknown service is 400 naming service", async () => {
    const res = await get("/api/v1/catalogue/networks", { service: "gas" });
    expect(res.status).toBe(400);
    expect(res.json.data.errors[0].field).toBe("service");
  });

  test("needs an API key", async () => {
    expect((await server.anonymous.get("/api/v1/catalogue/networks")).status).toBe(401);
  });
});

describe("GET /api/v1/catalogue/products", () => {
  test.each([
    ["airtime", 4],
    ["data", 39],
    ["electricity", 22],
    ["cable", 20],
  ])("service=%s lists the %i seeded products", async (service, count) => {
    const res = await get("/api/v1/catalogue/products", { service });
    expect(res.status).toBe(200);
    expect(res.json.data).toHaveLength(count);
    for (const product of res.json.data) expect(product.service).toBe(service);
  });

  test("unfiltered: all 85, ordered by network then product sort order", async () => {
    const res = await get("/api/v1/catalogue/products");
    expect(res.json.data).toHaveLength(85);
    expect(codes(res.json.data).slice(0, 3)).toEqual(["mtn-airtime", "mtn-data-1gb-1d", "mtn-data-500mb-7d"]);
  });

  test("filters combine; an unknown network is an empty list", async () => {
    const mtn = await get("/api/v1/catalogue/products", { network: "mtn" });
    expect(mtn.json.data).toHaveLength(11);
    const mtnData = await get("/api/v1/catalogue/products", { network: "mtn", service: "data" });
    expect(mtnData.json.data).toHaveLength(10);
    const ikedc = await get("/api/v1/catalogue/products", { network: "ikedc" });
    expect(codes(ikedc.json.data)).toEqual(["ikedc-prepaid", "ikedc-postpaid"]);
    expect(ikedc.json.data[1]).toMatchObject({ kind: "range", meter_type: "postpaid", min_amount_kobo: 100000 });
    const none = await get("/api/v1/catalogue/products", { network: "nepa" });
    expect(none.status).toBe(200);
    expect(none.json.data).toEqual([]);
  });

  test("the same for both modes", async () => {
    const test = await get("/api/v1/catalogue/products");
    const live = await get("/api/v1/catalogue/products", {}, liveKey);
    expect(live.status).toBe(200);
    expect(live.json.data).toEqual(test.json.data);
  });
});

describe("GET /api/v1/pricing", () => {
  test("fixed products carry their price, range products limits and a discount", async () => {
    const res = await get("/api/v1/pricing", { network: "mtn" });
    expect(res.status).toBe(200);
    expect(res.json.data).toHaveLength(11);
    expect(res.json.data[0]).toEqual({
      product_code: "mtn-airtime",
      service: "airtime",
      network: "mtn",
      kind: "range",
      discount_bps: 300,
      price_kobo: null,
      min_amount_kobo: 5000,
      max_amount_kobo: 5000000,
      updated_at: expect.any(String),
    });
    expect(res.json.data[1]).toEqual({
      product_code: "mtn-data-1gb-1d",
      service: "data",
      network: "mtn",
      kind: "fixed",
      discount_bps: 0,
      price_kobo: 50000,
      min_amount_kobo: null,
      max_amount_kobo: null,
      updated_at: expect.any(String),
    });
  });

  test("one item per active product, same filters as products", async () => {
    const queries: Record<string, string>[] = [
      {},
      { service: "cable" },
      { network: "dstv" },
      { network: "glo", service: "data" },
    ];
    for (const query of queries) {
      const pricing = await get("/api/v1/pricing", query);
      const listed = await get("/api/v1/catalogue/products", query);
      expect(codes(pricing.json.data)).toEqual(codes(listed.json.data));
    }
  });
});

describe("PATCH /admin/v1/products/{code}", () => {
  test("edits a range product's discount and limits; pricing follows; updated_at moves", async () => {
    const before = await findProduct(server.deps.db, "glo-airtime");
    const res = await patchProduct("glo-airtime", { discount_bps: 425, min_amount_kobo: 10000, max_amount_kobo: 2000000 });
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({
      code: "glo-airtime",
      discount_bps: 425,
      min_amount_kobo: 10000,
      max_amount_kobo: 2000000,
    });
    const after = await findProduct(server.deps.db, "glo-airtime");
    expect(after?.updatedAt.getTime()).toBeGreaterThan(before?.updatedAt.getTime() ?? Number.POSITIVE_INFINITY);
    const pricing = await get("/api/v1/pricing", { network: "glo", service: "airtime" });
    expect(pricing.json.data[0]).toMatchObject({ discount_bps: 425, min_amount_kobo: 10000, max_amount_kobo: 2000000 });
  });

  test("edits a fixed product's name and price", async () => {
    const res = await patchProduct("gotv-max", { name: "GOtv Max (new)", price_kobo: 900000 });
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ name: "GOtv Max (new)", price_kobo: 900000, kind: "fixed" });
    const listed = await get("/api/v1/catalogue/products", { network: "gotv" });
    expect(listed.json.data.find((p: { code: string }) => p.code === "gotv-max")).toMatchObject({ price_kobo: 900000 });
  });

  test("an inactive product leaves products and pricing, but findProduct still returns it", async () => {
    const deactivated = await patchProduct("glo-data-750mb-1d", { active: false });
    expect(deactivated.status).toBe(200);
    expect(deactivated.json.data.active).toBe(false);
    const listed = await get("/api/v1/catalogue/products", { service: "data" });
    expect(listed.json.data).toHaveLength(38);
    expect(codes(listed.json.data)).not.toContain("glo-data-750mb-1d");
    const pricing = await get("/api/v1/pricing", { network: "glo" });
    expect(codes(pricing.json.data)).not.toContain("glo-data-750mb-1d");
    expect((await findProduct(server.deps.db, "glo-data-750mb-1d"))?.active).toBe(false);
    expect((await patchProduct("glo-data-750mb-1d", { active: true })).json.data.active).toBe(true);
    expect((await get("/api/v1/catalogue/products", { service: "data" })).json.data).toHaveLength(39);
  });

  test.each([
    ["mtn-airtime", { price_kobo: 100 }, "price_kobo", /fixed-price product/],
    ["mtn-airtime", { min_amount_kobo: 6000000 }, "min_amount_kobo", /greater than max_amount_kobo/],
    ["mtn-airtime", { max_amount_kobo: 4000 }, "max_amount_kobo", /less than min_amount_kobo/],
    ["mtn-data-1gb-1d", { min_amount_kobo: 100 }, "min_amount_kobo", /range product/],
    ["mtn-data-1gb-1d", { discount_bps: 100 }, "discount_bps", /range products/],
    ["mtn-airtime", { discount_bps: 10001 }, "discount_bps", /10000/],
    ["mtn-airtime", { price: 100 }, "price", /is not an allowed field/],
    ["mtn-airtime", { name: "" }, "name", /fewer than 1/],
    ["mtn-airtime", { active: "no" }, "active", /boolean/],
  ])("%s with %j is 400 naming %s", async (code, body, field, message) => {
    const before = await findProduct(server.deps.db, code);
    const res = await patchProduct(code, body);
    expect(res.status).toBe(400);
    expect(res.json.code).toBe("VALIDATION_FAILED");
    const error = res.json.data.errors.find((e: { field: string }) => e.field === field);
    expect(error?.message).toMatch(message);
    expect(await findProduct(server.deps.db, code)).toEqual(before);
  });

  test("min above max names both fields when both are sent", async () => {
    const res = await patchProduct("mtn-airtime", { min_amount_kobo: 9000, max_amount_kobo: 8000 });
    expect(res.status).toBe(400);
    expect(res.json.data.errors.map((e: { field: string }) => e.field).sort()).toEqual(["max_amount_kobo", "min_amount_kobo"]);
  });

  test("an empty body is 400; an unknown code is 404; an API key is 401", async () => {
    expect((await patchProduct("mtn-airtime", {})).status).toBe(400);
    const missing = await patchProduct("no-such-product", { active: false });
    expect(missing.status).toBe(404);
    expect(missing.json.code).toBe("NOT_FOUND");
    const withKey = await server.client(testKey).request("PATCH", "/admin/v1/products/mtn-airtime", { active: false });
    expect(withKey.status).toBe(401);
    expect((await findProduct(server.deps.db, "mtn-airtime"))?.active).toBe(true);
  });

  test("findProduct is undefined for an unknown code", async () => {
    expect(await findProduct(server.deps.db, "nope")).toBeUndefined();
    const [row] = await server.deps.db.select().from(products).where(eq(products.code, "ikedc-prepaid"));
    expect(await findProduct(server.deps.db, "ikedc-prepaid")).toEqual(row);
  });
});
