import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/load-config.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/** As in production: DATABASE_URL set, WEBHOOK_ALLOW_PRIVATE_URLS unset. */
let server: TestServer;
/** As on a laptop (embedded database), or with WEBHOOK_ALLOW_PRIVATE_URLS=true. */
let permissive: TestServer;

beforeAll(async () => {
  server = await startTestServer({ webhooks: loadConfig({ DATABASE_URL: "postgres://db.internal/vend" }).webhooks });
  permissive = await startTestServer({ webhooks: { ...loadConfig({}).webhooks, allowPrivateUrls: true } });
});
afterAll(async () => {
  await server.close();
  await permissive.close();
});

// Literal public addresses: the guard needs no DNS for them (no test asks the internet).
const endpoint = { url: "http://93.184.216.34:9/hooks", description: "public receiver" };

describe("webhook endpoints", () => {
  test("create returns the whsec_ secret once; list never shows it", async () => {
    const { testKey } = await server.createAccount();
    const client = server.client(testKey);
    const created = await client.post("/api/v1/webhook-endpoints", endpoint);
    expect(created.status).toBe(201);
    const data = created.json.data;
    expect(data).toMatchObject({ url: endpoint.url, description: "public receiver", mode: "test" });
    expect(data.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(data.secret.slice(6), "base64").length).toBeGreaterThanOrEqual(24);
    const list = await client.get("/api/v1/webhook-endpoints");
    expect(list.status).toBe(200);
    const { secret: _secret, ...shown } = data;
    expect(list.json.data).toEqual([shown]);
    expect(shown).toMatchObject({ enabled: true, event_types: null, disabled_reason: null, previous_secret_expires_at: null });
    expect(list.text).not.toContain("whsec_");
  });

  test("a missing description is null; two endpoints get different secrets", async () => {
    const { testKey } = await server.createAccount();
    const client = server.client(testKey);
    const first = await client.post("/api/v1/webhook-endpoints", { url: "https://93.184.216.34/a" });
    const second = await client.post("/api/v1/webhook-endpoints", { url: "https://93.184.216.34/b" });
    expect(first.json.data.description).toBeNull();
    expect(first.json.data.secret).not.toBe(second.json.data.secret);
    const urls = (await client.get("/api/v1/webhook-endpoints")).json.data.map((e: { url: string }) => e.url);
    expect(urls).toEqual(["https://93.184.216.34/a", "https://93.184.216.34/b"]);
  });

  test("endpoints are isolated by account and mode; others' ids are 404", async () => {
    const a = await server.createAccount("a");
    const b = await server.createAccount("b");
    const aTest = server.client(a.testKey);
    const created = (await aTest.post("/api/v1/webhook-endpoints", endpoint)).json.data;
    expect((await server.client(a.liveKey).get("/api/v1/webhook-endpoints")).json.data).toEqual([]);
    expect((await server.client(b.testKey).get("/api/v1/webhook-endpoints")).json.data).toEqual([]);
    for (const key of [a.liveKey, b.testKey, b.liveKey]) {
      const res = await server.client(key).delete(`/api/v1/webhook-endpoints/${created.id}`);
      expect(res.status).toBe(404);
      expect(res.json.code).toBe("NOT_FOUND");
    }
    expect((await aTest.get("/api/v1/webhook-endpoints")).json.data).toHaveLength(1);
  });

  test("delete is soft, once: gone from the list, a second delete is 404", async () => {
    const { testKey } = await server.createAccount();
    const client = server.client(testKey);
    const created = (await client.post("/api/v1/webhook-endpoints", endpoint)).json.data;
    const removed = await client.delete(`/api/v1/webhook-endpoints/${created.id}`);
    expect(removed.status).toBe(200);
    expect(removed.json.data).toEqual({ id: created.id, deleted: true });
    expect((await client.get("/api/v1/webhook-endpoints")).json.data).toEqual([]);
    expect((await client.delete(`/api/v1/webhook-endpoints/${created.id}`)).status).toBe(404);
    expect((await client.delete("/api/v1/webhook-endpoints/not-a-uuid")).status).toBe(400);
  });

  test("test mode takes http or https; private targets only where they are allowed", async () => {
    const strict = server.client((await server.createAccount()).testKey);
    const laptop = permissive.client((await permissive.createAccount()).testKey);
    for (const url of ["http://localhost:3000/hooks", "http://10.0.0.2/x", "https://127.0.0.1/x", "http://[::1]:8080/"]) {
      const refused = await strict.post("/api/v1/webhook-endpoints", { url });
      expect(refused.status).toBe(400);
      expect(refused.json.data.errors[0].field).toBe("url");
      expect((await laptop.post("/api/v1/webhook-endpoints", { url })).status).toBe(201);
    }
    expect((await strict.post("/api/v1/webhook-endpoints", { url: "http://93.184.216.34/x" })).status).toBe(201);
    const ftp = await strict.post("/api/v1/webhook-endpoints", { url: "ftp://example.com/x" });
    expect(ftp.status).toBe(400);
    expect(ftp.json.data.errors).toEqual([{ field: "url", message: "must use http or https" }]);
  });
});

describe("live-mode URL guard", () => {
  test.each([
    ["http://example.com/hooks", "must use https in live mode"],
    ["https://127.0.0.1/hooks", "must not be a private or loopback address"],
    ["https://localhost/hooks", "must resolve to public addresses only"],
    ["https://192.168.0.10/hooks", "must not be a private or loopback address"],
    ["https://[fd00::1]/hooks", "must not be a private or loopback address"],
    ["https://[2002:7f00:1::]/hooks", "must not be a private or loopback address"],
  ])("%s is refused", async (url, reason) => {
    const { liveKey } = await server.createAccount();
    const res = await server.client(liveKey).post("/api/v1/webhook-endpoints", { url });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe("VALIDATION_FAILED");
    expect(res.json.data.errors).toHaveLength(1);
    expect(res.json.data.errors[0].field).toBe("url");
    expect(res.json.data.errors[0].message).toBe(reason);
    expect(res.json.message).toContain("url");
    expect((await server.client(liveKey).get("/api/v1/webhook-endpoints")).json.data).toEqual([]);
  });

  test("a public https address is accepted", async () => {
    const { liveKey } = await server.createAccount();
    const res = await server.client(liveKey).post("/api/v1/webhook-endpoints", { url: "https://93.184.216.34/hooks" });
    expect(res.status).toBe(201);
    expect(res.json.data.mode).toBe("live");
  });

  test("allowPrivateUrls lets private https addresses through, still not plain http", async () => {
    const { liveKey } = await permissive.createAccount();
    const client = permissive.client(liveKey);
    expect((await client.post("/api/v1/webhook-endpoints", { url: "https://127.0.0.1/hooks" })).status).toBe(201);
    expect((await client.post("/api/v1/webhook-endpoints", { url: "https://localhost:8443/hooks" })).status).toBe(201);
    expect((await client.post("/api/v1/webhook-endpoints", { url: "http://127.0.0.1/hooks" })).status).toBe(400);
  });
});
