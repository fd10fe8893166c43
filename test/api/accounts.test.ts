import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe("POST /admin/v1/accounts", () => {
  test("returns the account with a test key and a live key, once; only hashes are stored", async () => {
    const res = await server.admin.post("/admin/v1/accounts", { name: "Acme Stores" });
    expect(res.status).toBe(201);
    const { account, keys } = res.json.data;
    expect(account.name).toBe("Acme Stores");
    expect(keys.map((k: { mode: string }) => k.mode).sort()).toEqual(["live", "test"]);
    for (const key of keys) {
      expect(key.key).toMatch(new RegExp(`^rg_${key.mode}_[0-9A-Za-z]{40}$`));
      expect(key.key.startsWith(key.prefix)).toBe(true);
    }
    const stored = await server.database.handle.db.query.apiKeys.findMany();
    const storedText = JSON.stringify(stored);
    for (const key of keys) expect(storedText).not.toContain(key.key);
    const listed = await server.admin.get("/admin/v1/accounts");
    expect(listed.text).not.toContain("rg_test_");
  });

  test("both keys authenticate, each in its own mode", async () => {
    const { testKey, liveKey } = await server.createAccount("Modes Ltd");
    expect((await server.client(testKey).get("/api/v1/wallet")).status).not.toBe(401);
    expect((await server.client(liveKey).get("/api/v1/wallet")).status).not.toBe(401);
  });

  test.each([
    [{}, "name", "is required"],
    [{ name: "" }, "name", "must NOT have fewer than 1 characters"],
    [{ name: "x".repeat(101) }, "name", "must NOT have more than 100 characters"],
    [{ name: "ok", plan: "gold" }, "plan", "is not an allowed field"],
  ])("invalid body %j is 400 naming %s", async (body, field, message) => {
    const res = await server.admin.post("/admin/v1/accounts", body);
    expect(res.status).toBe(400);
    expect(res.json.data.errors).toContainEqual({ field, message });
  });
});

describe("GET /admin/v1/accounts", () => {
  test("pages newest first with signed cursors, no duplicates or gaps", async () => {
    const names = Array.from({ length: 7 }, (_, i) => `Pager ${i}`);
    for (const name of names) await server.createAccount(name);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await server.admin.get("/admin/v1/accounts", { query: { search: "pager", limit: 3, cursor } });
      expect(res.status).toBe(200);
      seen.push(...res.json.data.items.map((a: { name: string }) => a.name));
      cursor = res.json.data.page.next_cursor ?? undefined;
      expect(res.json.data.page.has_more).toBe(cursor !== undefined);
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...names].reverse());
  });

  test("a forged, modified or re-filtered cursor is 400 on field cursor", async () => {
    const first = await server.admin.get("/admin/v1/accounts", { query: { limit: 1 } });
    const cursor: string = first.json.data.page.next_cursor;
    expect(cursor).toBeString();
    const tampered = `${cursor.slice(0, 3)}${cursor[3] === "A" ? "B" : "A"}${cursor.slice(4)}`;
    for (const query of [{ cursor: "garbage" }, { cursor: tampered }, { cursor, search: "other" }]) {
      const res = await server.admin.get("/admin/v1/accounts", { query: { limit: 1, ...query } });
      expect(res.status).toBe(400);
      expect(res.json.message).toBe("Invalid cursor");
      expect(res.json.data.errors[0].field).toBe("cursor");
    }
  });

  test("limit above 100 is treated as 100; 0 is refused", async () => {
    expect((await server.admin.get("/admin/v1/accounts", { query: { limit: 500 } })).status).toBe(200);
    const zero = await server.admin.get("/admin/v1/accounts", { query: { limit: 0 } });
    expect(zero.status).toBe(400);
    expect(zero.json.data.errors[0].field).toBe("limit");
  });
});
