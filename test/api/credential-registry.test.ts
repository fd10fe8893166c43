import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { CredentialRegistry, type RegisteredKey } from "../../src/auth/credential-registry.ts";
import { hashApiKey } from "../../src/auth/keys.ts";
import { apiKeys } from "../../src/db/schema/index.ts";
import { sha256Hex } from "../../src/lib/secrets.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

const key = (overrides: Partial<RegisteredKey> = {}): RegisteredKey => ({
  keyId: randomUUID(),
  accountId: randomUUID(),
  mode: "test",
  expiresAt: null,
  revokedAt: null,
  allowedCidrs: null,
  ...overrides,
});

const announce = (hash: string, k: RegisteredKey) =>
  JSON.stringify({
    kind: "key",
    hash,
    id: k.keyId,
    account_id: k.accountId,
    mode: k.mode,
    expires_at: k.expiresAt,
    revoked_at: k.revokedAt,
    allowed_cidrs: k.allowedCidrs,
    deleted: false,
  });

describe("CredentialRegistry (in memory, clock given)", () => {
  test("current only while the last completed heartbeat was sent less than 3/4 of the bound ago, and once loaded", () => {
    const registry = new CredentialRegistry(2000);
    expect(registry.isCurrent(1000)).toBe(false);
    registry.beginReload();
    registry.finishReload(new Map(), new Map());
    registry.proven(1000, 1000, 1002);
    expect(registry.isCurrent(2499)).toBe(true);
    expect(registry.isCurrent(2500)).toBe(false);
    registry.invalidate();
    expect(registry.isCurrent(1001)).toBe(false);
  });

  test("announcements that arrive during a reload are replayed over the loaded state", () => {
    const registry = new CredentialRegistry(2000);
    const hash = sha256Hex("a");
    const loaded = key();
    registry.beginReload();
    // Committed after the load's snapshot: the load does not have it, the announcement does.
    registry.apply(announce(hash, { ...loaded, revokedAt: 5 }));
    registry.finishReload(new Map([[hash, loaded]]), new Map());
    expect(registry.apiKey(hash)?.revokedAt).toBe(5);
  });

  test("this process's own change only tightens: it cannot undo a newer change that arrived first", () => {
    const registry = new CredentialRegistry(2000);
    const hash = sha256Hex("b");
    registry.beginReload();
    registry.finishReload(new Map([[hash, key({ revokedAt: 100, expiresAt: 50 })]]), new Map());
    registry.knowKey(hash, key({ revokedAt: null, expiresAt: 80 }));
    expect(registry.apiKey(hash)).toMatchObject({ revokedAt: 100, expiresAt: 50 });
  });

  test("a request waiting for a hash it does not know is released by the first heartbeat sent after it arrived", async () => {
    const registry = new CredentialRegistry(10_000);
    let released = false;
    const waiting = registry.caughtUpWith(2000).then(() => {
      released = true;
    });
    registry.proven(1999, 0, 2001);
    // Nothing to wait for: a moment for a wrong release to happen, were there one.
    await Bun.sleep(1);
    expect(released).toBe(false);
    registry.proven(2000, 0, 2001);
    await waiting;
    expect(released).toBe(true);
  });

  test("memory: 100,000 keys", () => {
    Bun.gc(true);
    const before = process.memoryUsage().heapUsed;
    const keys = new Map<string, RegisteredKey>();
    for (let i = 0; i < 100_000; i++) keys.set(sha256Hex(`key-${i}`), key());
    const registry = new CredentialRegistry(2000);
    registry.beginReload();
    registry.finishReload(keys, new Map());
    Bun.gc(true);
    const bytes = process.memoryUsage().heapUsed - before;
    console.log(
      `credential registry: ${(bytes / 1048576).toFixed(1)} MiB of heap for 100,000 keys (${Math.round(bytes / 100_000)} bytes each)`,
    );
    expect(registry.size.keys).toBe(100_000);
    expect(bytes).toBeLessThan(100 * 1048576);
  });
});

describe("the registry of a running server", () => {
  let server: TestServer;
  let loadedWhenBuilt = false;

  beforeAll(async () => {
    server = await startTestServer();
    loadedWhenBuilt = server.deps.credentials.isLoaded;
  });
  afterAll(() => server.close());

  // Current means a heartbeat proved it within 3/4 of KEY_PROPAGATION_MS. The first one is sent before the rest
  // of the server is built, which a busy machine can stretch past that (7 s seen at a load of 20): the beat
  // that follows, a quarter of the bound later, makes it current again.
  test("loaded as soon as the server is built, and current by its next heartbeat", async () => {
    expect(loadedWhenBuilt).toBe(true);
    await waitUntil(() => server.deps.credentials.isCurrent(), {
      what: "the registry current again",
      timeoutMs: server.deps.config.keyPropagationMs / 4 + 1000,
    });
    expect(server.deps.credentials.isCurrent()).toBe(true);
  });

  test("a change written by plain SQL (as vendctl or an operator would) reaches it through the trigger's notification", async () => {
    const account = await server.createAccount("sql-change");
    const hash = hashApiKey(account.testKey);
    await waitUntil(() => server.deps.credentials.apiKey(hash) !== undefined, { what: "the new key in the registry" });
    await server.deps.db
      .update(apiKeys)
      .set({ allowedCidrs: ["10.0.0.0/8"] })
      .where(eq(apiKeys.keyHash, hash));
    await waitUntil(() => server.deps.credentials.apiKey(hash)?.allowedCidrs?.[0] === "10.0.0.0/8", {
      what: "the changed allow-list in the registry",
    });
    expect((await server.client(account.testKey).get("/api/v1/wallet")).json.code).toBe("IP_NOT_ALLOWED");
  });

  test.skipIf(!process.env.DATABASE_URL)(
    "a lost listening connection: a revocation it missed still takes effect within the bound, then everything is reloaded",
    async () => {
      const account = await server.createAccount("outage");
      const hash = hashApiKey(account.testKey);
      await waitUntil(() => server.deps.credentials.apiKey(hash) !== undefined, { what: "the new key in the registry" });
      const name = new URL(server.database.url ?? "").pathname.slice(1);
      await server.deps.db.execute(
        sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'vend-watch' and datname = ${name}`,
      );
      const revokedAt = Date.now();
      await server.deps.db.update(apiKeys).set({ revokedAt: sql`now()` }).where(eq(apiKeys.keyHash, hash));
      // Its notification went nowhere; the key stops working within the propagation bound all the same.
      let status = 200;
      while (status === 200) {
        status = (await server.client(account.testKey).get("/api/v1/wallet")).status;
        expect(Date.now() - revokedAt).toBeLessThan(server.deps.config.keyPropagationMs + 100);
      }
      expect(status).toBe(401);
      await waitUntil(() => server.deps.credentials.isCurrent() && server.deps.credentials.apiKey(hash) === undefined, {
        what: "the registry current without the key",
      });
      expect((await server.client(account.testKey).get("/api/v1/wallet")).status).toBe(401);
    },
  );
});
