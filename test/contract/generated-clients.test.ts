import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createVendClient } from "../../generated/openapi-fetch-client.ts";
import { createClient as createSdkClient } from "../../generated/sdk/client/index.ts";
import { createAccount, getHealth, listAccounts } from "../../generated/sdk/index.ts";
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
    const created = await client.POST("/admin/v1/accounts", { body: { name: "Typed Co" } });
    expect(created.response.status).toBe(201);
    const account = created.data?.data.account;
    expect(account?.name).toBe("Typed Co");
    const listed = await client.GET("/admin/v1/accounts", { params: { query: { limit: 10, search: "Typed" } } });
    expect(listed.data?.data.items.map((a) => a.id)).toEqual([account?.id ?? "missing"]);
    const refused = await client.POST("/admin/v1/accounts", { body: { name: "" } });
    expect(refused.error?.code).toBe("VALIDATION_FAILED");
  });

  test("hey-api SDK (typed)", async () => {
    const client = createSdkClient({ baseUrl: server.url, fetch: contractFetch, auth: () => testAdminToken });
    const health = await getHealth({ client });
    expect(health.data?.data.status).toBe("ok");
    const created = await createAccount({ client, body: { name: "Sdk Co" } });
    expect(created.response?.status).toBe(201);
    expect(created.data?.data.keys).toHaveLength(2);
    const listed = await listAccounts({ client, query: { search: "Sdk" } });
    expect(listed.data?.data.items[0]?.name).toBe("Sdk Co");
  });
});
