import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { entityTagOf, noneMatchHits } from "../../src/http/conditional.ts";
import type { HttpResult } from "../helpers/http.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let testKey: string;
let otherKey: string;

beforeAll(async () => {
  server = await startTestServer();
  ({ testKey } = await server.createAccount("Etag Ltd"));
  ({ liveKey: otherKey } = await server.createAccount("Other Ltd"));
}, 60_000);
afterAll(() => server.close());

const get = (path: string, query: Record<string, string> = {}, ifNoneMatch?: string, key = testKey) =>
  server.client(key).get(path, { query, headers: ifNoneMatch === undefined ? {} : { "if-none-match": ifNoneMatch } });
const patchProduct = (code: string, body: unknown) => server.admin.request("PATCH", `/admin/v1/products/${code}`, body);

function etagOf(res: HttpResult): string {
  const etag = res.headers.get("etag");
  if (!etag) throw new Error(`no ETag on ${res.status}`);
  return etag;
}

function expectNotModified(res: HttpResult, etag: string) {
  expect(res.status).toBe(304);
  expect(res.text).toBe("");
  expect(res.headers.get("etag")).toBe(etag);
  expect(res.headers.get("cache-control")).toBe("private, no-cache");
  expect(res.headers.get("x-request-id")).toBeTruthy();
}

const reads: [string, Record<string, string>][] = [
  ["/api/v1/catalogue/networks", {}],
  ["/api/v1/catalogue/services", {}],
  ["/api/v1/catalogue/products", {}],
  ["/api/v1/pricing", {}],
];

describe("noneMatchHits (RFC 9110 If-None-Match, weak comparison)", () => {
  const tag = '"abc"';
  test.each([
    ['"abc"', true],
    ['W/"abc"', true],
    ['"x", "abc"', true],
    ['"x",W/"abc" , "y"', true],
    ["*", true],
    [" * ", true],
    ['"abcd"', false],
    ['"ab"', false],
    ["abc", false],
    ["", false],
    ['"x", "y"', false],
  ] as const)("%p → %p", (header, hit) => {
    expect(noneMatchHits(header, tag)).toBe(hit);
  });

  test("no header matches nothing", () => {
    expect(noneMatchHits(null, tag)).toBe(false);
  });
});

describe.each(reads)("GET %s", (path, query) => {
  test("200 carries a strong ETag of its exact body and private, no-cache; the same answer keeps the same tag", async () => {
    const first = await get(path, query);
    expect(first.status).toBe(200);
    const etag = etagOf(first);
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(etag).toBe(entityTagOf(first.text));
    expect(first.headers.get("cache-control")).toBe("private, no-cache");
    const second = await get(path, query);
    expect(second.text).toBe(first.text);
    expect(etagOf(second)).toBe(etag);
  });

  test("If-None-Match naming the tag (alone, in a list, weak, or *) is 304 with no body and the same headers", async () => {
    const etag = etagOf(await get(path, query));
    for (const header of [etag, `"stale", ${etag}`, `W/${etag}`, `"a",W/${etag},"b"`, "*"]) {
      expectNotModified(await get(path, query, header), etag);
    }
  });

  test("If-None-Match naming other tags, or none, is a 200 with the body", async () => {
    const plain = await get(path, query);
    for (const header of ['"something-else"', 'W/"x", "y"', "not-a-tag", ""]) {
      const res = await get(path, query, header);
      expect(res.status).toBe(200);
      expect(res.text).toBe(plain.text);
      expect(etagOf(res)).toBe(etagOf(plain));
    }
  });

  test("authentication comes first: a matching tag without a key is 401", async () => {
    const etag = etagOf(await get(path, query));
    const res = await server.anonymous.get(path, { query, headers: { "if-none-match": etag } });
    expect(res.status).toBe(401);
  });
});

describe("tags follow the body", () => {
  test("another filter is another body with another tag: the unfiltered tag does not match it", async () => {
    for (const path of ["/api/v1/catalogue/products", "/api/v1/pricing"]) {
      const all = await get(path);
      const mtn = await get(path, { network: "mtn" });
      const mtnData = await get(path, { network: "mtn", service: "data" });
      const tags = [all, mtn, mtnData].map(etagOf);
      expect(new Set(tags).size).toBe(3);
      const res = await get(path, { network: "mtn" }, etagOf(all));
      expect(res.status).toBe(200);
      expect(etagOf(res)).toBe(etagOf(mtn));
      expectNotModified(await get(path, { network: "mtn" }, etagOf(mtn)), etagOf(mtn));
    }
    const networks = await get("/api/v1/catalogue/networks");
    const discos = await get("/api/v1/catalogue/networks", { service: "electricity" });
    expect(etagOf(discos)).not.toBe(etagOf(networks));
  });

  test("pricing is the same for every account and mode, so its tag is too", async () => {
    const mine = await get("/api/v1/pricing", { network: "glo" });
    const theirs = await get("/api/v1/pricing", { network: "glo" }, etagOf(mine), otherKey);
    expectNotModified(theirs, etagOf(mine));
  });

  test("an operator's price change gives the products and pricing a new tag; the old one no longer matches", async () => {
    const products = await get("/api/v1/catalogue/products", { network: "airtel" });
    const pricing = await get("/api/v1/pricing", { network: "airtel" });
    const networks = await get("/api/v1/catalogue/networks");
    const before = products.json.data.find((p: { code: string }) => p.code === "airtel-data-1gb-1d");
    expect(before).toBeDefined();

    const changed = await patchProduct("airtel-data-1gb-1d", { price_kobo: before.price_kobo + 100 });
    expect(changed.status).toBe(200);
    expect(Date.parse(changed.json.data.updated_at)).toBeGreaterThan(Date.parse(before.updated_at));

    const productsAfter = await get("/api/v1/catalogue/products", { network: "airtel" }, etagOf(products));
    expect(productsAfter.status).toBe(200);
    expect(etagOf(productsAfter)).not.toBe(etagOf(products));
    const after = productsAfter.json.data.find((p: { code: string }) => p.code === "airtel-data-1gb-1d");
    expect(after).toEqual(changed.json.data);
    const pricingAfter = await get("/api/v1/pricing", { network: "airtel" }, etagOf(pricing));
    expect(pricingAfter.status).toBe(200);
    const priced = pricingAfter.json.data.find((p: { product_code: string }) => p.product_code === "airtel-data-1gb-1d");
    expect(priced).toMatchObject({ price_kobo: before.price_kobo + 100, updated_at: after.updated_at });
    // The networks did not change: their tag still matches.
    expectNotModified(await get("/api/v1/catalogue/networks", {}, etagOf(networks)), etagOf(networks));
  });

  test("disabling a product drops it from the list and changes the tag; enabling it again brings it back with a later updated_at", async () => {
    const original = await get("/api/v1/catalogue/products", { network: "9mobile", service: "airtime" });
    const [product] = original.json.data;
    expect(product).toBeDefined();
    expect((await patchProduct(product.code, { active: false })).status).toBe(200);
    const without = await get("/api/v1/catalogue/products", { network: "9mobile", service: "airtime" }, etagOf(original));
    expect(without.status).toBe(200);
    expect(without.json.data).toEqual([]);
    expect((await patchProduct(product.code, { active: true })).status).toBe(200);
    const back = await get("/api/v1/catalogue/products", { network: "9mobile", service: "airtime" }, etagOf(without));
    expect(back.status).toBe(200);
    // Same fields, but updated_at moved twice: a different body, so a different tag from the original.
    expect(back.json.data[0]).toEqual({ ...product, updated_at: back.json.data[0].updated_at });
    expect(Date.parse(back.json.data[0].updated_at)).toBeGreaterThan(Date.parse(product.updated_at));
    expect(etagOf(back)).not.toBe(etagOf(original));
  });

  test("an edit that changes nothing moves neither updated_at nor the tag", async () => {
    const products = await get("/api/v1/catalogue/products", { network: "glo", service: "data" });
    const [product] = products.json.data;
    const same = await patchProduct(product.code, { price_kobo: product.price_kobo, active: true, name: product.name });
    expect(same.status).toBe(200);
    expect(same.json.data).toEqual(product);
    expectNotModified(
      await get("/api/v1/catalogue/products", { network: "glo", service: "data" }, etagOf(products)),
      etagOf(products),
    );
  });

  test("a name change moves updated_at and the products tag", async () => {
    const products = await get("/api/v1/catalogue/products", { network: "glo", service: "data" });
    const [product] = products.json.data;
    const renamed = await patchProduct(product.code, { name: `${product.name} (new)` });
    expect(renamed.status).toBe(200);
    expect(Date.parse(renamed.json.data.updated_at)).toBeGreaterThan(Date.parse(product.updated_at));
    const after = await get("/api/v1/catalogue/products", { network: "glo", service: "data" }, etagOf(products));
    expect(after.status).toBe(200);
    expect(after.json.data[0]).toEqual(renamed.json.data);
  });
});
