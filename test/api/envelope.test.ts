import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  key = (await server.createAccount()).testKey;
});
afterAll(() => server.close());

const vendHeaders = { "idempotency-key": "k-envelope-1" };

describe("request validation compiled from openapi.yaml", () => {
  test("unknown body field on POST /api/v1/vend is 400 naming the field", async () => {
    const res = await server
      .client(key)
      .post(
        "/api/v1/vend",
        { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10000, colour: "blue" },
        { headers: vendHeaders },
      );
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ success: false, code: "VALIDATION_FAILED" });
    expect(res.json.data.errors).toContainEqual({ field: "colour", message: "is not an allowed field" });
  });

  test("every problem is listed, one entry each", async () => {
    const res = await server.client(key).post("/api/v1/vend", { amount_kobo: "ten", metadata: { a: 1 }, x: 1 });
    expect(res.status).toBe(400);
    const fields = res.json.data.errors.map((e: { field: string }) => e.field).sort();
    expect(fields).toEqual(["Idempotency-Key", "amount_kobo", "metadata.a", "x"]);
  });

  test("malformed JSON is 400 in the envelope", async () => {
    const res = await server.client(key).post("/api/v1/vend", undefined, { raw: '{"product_code": ', headers: vendHeaders });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe("VALIDATION_FAILED");
    expect(res.json.data.errors).toEqual([{ field: "body", message: "is not valid JSON" }]);
  });

  test("a body that is not JSON is 415", async () => {
    const res = await server.client(key).post("/api/v1/vend", undefined, {
      raw: "product_code=x",
      headers: { ...vendHeaders, "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(415);
    expect(res.json.code).toBe("UNSUPPORTED_MEDIA_TYPE");
  });

  test("a body over 64 KiB is 413", async () => {
    const res = await server
      .client(key)
      .post("/api/v1/vend", { metadata: { big: "x".repeat(70 * 1024) } }, { headers: vendHeaders });
    expect(res.status).toBe(413);
    expect(res.json.code).toBe("PAYLOAD_TOO_LARGE");
  });

  test("a bad query parameter is 400 naming it", async () => {
    const res = await server.admin.get("/admin/v1/accounts", { query: { limit: "lots" } });
    expect(res.status).toBe(400);
    expect(res.json.data.errors[0].field).toBe("limit");
  });
});

describe("routing", () => {
  test("unknown route is 404 in the envelope", async () => {
    const res = await server.client(key).get("/api/v1/nothing-here");
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ success: false, code: "NOT_FOUND", message: "No route for GET /api/v1/nothing-here", data: null });
  });

  test("known path with the wrong method is 405 with Allow", async () => {
    const res = await server.client(key).request("PUT", "/api/v1/vend", {});
    expect(res.status).toBe(405);
    expect(res.json.code).toBe("METHOD_NOT_ALLOWED");
    expect(res.headers.get("allow")).toBe("POST");
  });

  test("X-Request-Id is echoed when given, generated otherwise", async () => {
    const echoed = await server.anonymous.get("/healthz", { headers: { "x-request-id": "trace-abc-123" } });
    expect(echoed.headers.get("x-request-id")).toBe("trace-abc-123");
    const generated = await server.anonymous.get("/healthz");
    expect(generated.headers.get("x-request-id")).toMatch(/^req_[A-Za-z0-9]{20}$/);
  });
});

describe("operational endpoints", () => {
  test("/healthz and /readyz", async () => {
    expect((await server.anonymous.get("/healthz")).json).toEqual({
      success: true,
      code: "OK",
      message: "OK",
      data: { status: "ok" },
    });
    expect((await server.anonymous.get("/readyz")).json.data).toEqual({ status: "ok", database: "ok" });
  });

  test("/openapi.yaml serves the contract and /docs renders it", async () => {
    const spec = await server.anonymous.get("/openapi.yaml");
    expect(spec.status).toBe(200);
    expect(spec.text).toStartWith("openapi: 3.1");
    const docs = await server.anonymous.get("/docs");
    expect(docs.headers.get("content-type")).toContain("text/html");
    expect(docs.text).toContain('"url":"/openapi.yaml?view=client"');
    const script = await server.anonymous.get("/docs/scalar.js");
    expect(script.status).toBe(200);
    expect(script.text.length).toBeGreaterThan(100_000);
  });
});

describe("failures", () => {
  test("database down: /readyz is 503 and data routes are 503, never a driver message", async () => {
    const broken = await startTestServer();
    try {
      const brokenKey = (await broken.createAccount()).testKey;
      // The server's own handle (on PostgreSQL, its service role's; the test's owner handle is another).
      await broken.deps.database.close();
      const ready = await broken.anonymous.get("/readyz");
      expect(ready.status).toBe(503);
      const res = await broken.client(brokenKey).get("/api/v1/wallet");
      expect(res.status).toBe(503);
      expect(res.json.code).toBe("SERVICE_UNAVAILABLE");
      expect(res.text).not.toMatch(/postgres|pglite|ECONN|stack/i);
    } finally {
      await broken.server.stop();
      await broken.database.drop().catch(() => {});
    }
  });
});
