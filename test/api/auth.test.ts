import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadSpec } from "../../src/http/spec.ts";
import { HttpClient } from "../helpers/http.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let keys: { testKey: string; liveKey: string };

beforeAll(async () => {
  server = await startTestServer();
  keys = await server.createAccount();
});
afterAll(() => server.close());

const apiOperations = loadSpec().operations.filter((op) => op.path.startsWith("/api/v1"));
const concretePath = (path: string) => path.replace(/\{[^}]+\}/g, "x");

const badCredentials: [string, Record<string, string>][] = [
  ["missing header", {}],
  ["non-Bearer scheme", { authorization: "Basic cmdfdGVzdF94eHg6" }],
  ["unknown prefix", { authorization: "Bearer sk_test_0123456789abcdefghijABCDEFGHIJ0123456789" }],
  ["unknown key", { authorization: "Bearer rg_test_0123456789abcdefghijABCDEFGHIJ0123456789" }],
];

describe("every /api/v1 route refuses bad credentials with 401", () => {
  test("the contract has /api/v1 operations to check", () => {
    expect(apiOperations.length).toBeGreaterThan(15);
  });

  for (const [label, headers] of badCredentials) {
    test(label, async () => {
      const anonymous = new HttpClient(server.url);
      for (const op of apiOperations) {
        const body = op.method === "GET" || op.method === "DELETE" ? undefined : { a: 1 };
        const res = await anonymous.request(op.method, concretePath(op.path), body, { headers });
        expect({ op: op.operationId, status: res.status, code: res.json.code }).toEqual({
          op: op.operationId,
          status: 401,
          code: "UNAUTHENTICATED",
        });
        expect(res.json.success).toBe(false);
        const secret = headers.authorization?.split(" ")[1];
        if (secret) expect(res.text).not.toContain(secret);
      }
    });
  }

  test("a revoked-looking key of the wrong mode prefix is refused", async () => {
    const forged = keys.testKey.replace("rg_test_", "rg_live_");
    const res = await server.client(forged).get("/api/v1/wallet");
    expect(res.status).toBe(401);
    expect(res.text).not.toContain(forged);
  });

  test("a valid key gets past authentication", async () => {
    const res = await server.client(keys.testKey).get("/api/v1/wallet");
    expect(res.status).not.toBe(401);
  });
});

describe("admin API", () => {
  test("wrong admin token is 401, missing is 401", async () => {
    expect((await server.client("nope-nope-nope-nope").get("/admin/v1/accounts")).status).toBe(401);
    expect((await server.anonymous.get("/admin/v1/accounts")).status).toBe(401);
  });

  test("is off (404) when ADMIN_TOKEN is not configured", async () => {
    const off = await startTestServer({ adminToken: undefined });
    try {
      const res = await new HttpClient(off.url, "anything-at-all-123").get("/admin/v1/accounts");
      expect(res.status).toBe(404);
      expect(res.json.code).toBe("NOT_FOUND");
    } finally {
      await off.close();
    }
  });
});
