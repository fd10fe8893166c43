import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createVendClient } from "../../generated/openapi-fetch-client.ts";
import { VendAdmin } from "../../sdk/src/admin.ts";
import { contractFetch } from "../helpers/contract.ts";
import { startTestServer, type TestServer, testAdminToken } from "../helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe("generated clients talk to the real server", () => {
  test("openapi-fetch client (typed)", async () => {
    const client = createVendClient({
      baseUrl: server.url,
      fetch: contractFetch,
      headers: { authorization: `Bearer ${testAdminToken}` },
    });
    const health = await client.GET("/healthz");
    expect(health.data?.data.status).toBe("ok");
    const created = await client.POST("/admin/v1/accounts", { body: { name: "Typed Co" } });
    expect(created.response.status).toBe(201);
    const account = created.data?.data.account;
    expect(account?.name).toBe("Typed Co");
    const listed = await client.GET("/admin/v1/accounts", { params: { query: { limit: 10, search: "Typed" } } });
    expect(listed.data?.data.items.map((a) => a.id)).toEqual([account?.id ?? "missing"]);
    const refused = await client.POST("/admin/v1/accounts", { body: { name: "" } });
    expect(refused.error?.code).toBe("VALIDATION_FAILED");
  });

  test("the SDK on the hey-api output (typed)", async () => {
    const statuses: number[] = [];
    const admin = new VendAdmin({
      baseUrl: server.url,
      token: testAdminToken,
      fetch: async (request) => {
        const response = await contractFetch(request);
        statuses.push(response.status);
        return response;
      },
    });
    const created = await admin.accounts.create({ name: "Sdk Co" });
    expect(statuses).toEqual([201]);
    expect(created.keys).toHaveLength(2);
    const listed = await admin.accounts.list({ search: "Sdk" }).toArray({ limit: 10 });
    expect(listed[0]?.name).toBe("Sdk Co");
  });
});
