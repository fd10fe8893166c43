import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AuthGuard, throttleSubject } from "../../src/auth/guard.ts";
import { generateApiKey, keysIssued } from "../../src/auth/keys.ts";
import type { Database } from "../../src/db/client.ts";
import { providerCallbacks } from "../../src/db/schema/index.ts";
import type { AppError } from "../../src/errors.ts";
import { randomBase62 } from "../../src/lib/random.ts";
import type { HttpResult } from "../helpers/http.ts";
import { sandboxCallback } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/**
 * Failed authentication is throttled per client address before any database work, and unknown keys
 * are answered from memory for a while. The database is watched by counting `select` calls made
 * through `deps.db` (every API-key look-up is one; nothing else runs on a 401 path).
 */
function watchSelects(server: TestServer): { count(): number; stop(): void } {
  const db = server.deps.db;
  let selects = 0;
  server.deps.db = new Proxy(db, {
    get(target, property) {
      if (property === "select") selects += 1;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as Database;
  return {
    count: () => selects,
    stop: () => {
      server.deps.db = db;
    },
  };
}

const unknownKey = () => `rg_test_${randomBase62(40)}`;
const failuresPerMinute = 50;
const concurrency = 8;

/** `total` requests, `concurrency` at a time, each with a fresh unknown key. */
async function flood(server: TestServer, total: number, headers: Record<string, string> = {}): Promise<HttpResult[]> {
  const results: HttpResult[] = [];
  for (let sent = 0; sent < total; sent += concurrency) {
    const batch = Array.from({ length: Math.min(concurrency, total - sent) }, () =>
      server.client(unknownKey()).get("/api/v1/wallet", { headers }),
    );
    results.push(...(await Promise.all(batch)));
  }
  return results;
}

describe("failed authentications are throttled per client address (peer address, no proxy trust)", () => {
  let server: TestServer;
  let keys: { testKey: string; liveKey: string };

  beforeAll(async () => {
    server = await startTestServer({ authFailuresPerMinute: failuresPerMinute });
    keys = await server.createAccount("throttled");
    // The test key is used once, so it is known-good (cached) before the flood.
    expect((await server.client(keys.testKey).get("/api/v1/wallet")).status).toBe(200);
  });
  afterAll(() => server.close());

  test("2,000 unknown keys: 429 RATE_LIMITED with Retry-After after the threshold, and the database is not asked per request", async () => {
    const selects = watchSelects(server);
    const results = await flood(server, 2000);
    selects.stop();
    const statuses = results.map((r) => r.status);
    const unauthenticated = statuses.filter((s) => s === 401).length;
    const limited = results.filter((r) => r.status === 429);
    expect(unauthenticated + limited.length).toBe(2000);
    // At most the threshold plus what was already in flight when it was crossed reached the database.
    expect(unauthenticated).toBeGreaterThanOrEqual(failuresPerMinute);
    expect(unauthenticated).toBeLessThan(failuresPerMinute + concurrency);
    expect(selects.count()).toBeLessThan(failuresPerMinute + concurrency);
    const first = limited[0];
    expect(first?.json.code).toBe("RATE_LIMITED");
    const retryAfter = Number(first?.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
  });

  test("from the throttled address every working key is served, used before or not; an unknown one is 429", async () => {
    expect((await server.client(keys.testKey).get("/api/v1/wallet")).status).toBe(200);
    expect((await server.client(keys.liveKey).get("/api/v1/wallet")).status).toBe(200);
    const created = await server.createAccount("created after the flood");
    expect((await server.client(created.testKey).get("/api/v1/wallet")).status).toBe(200);
    const unknown = await server.client(unknownKey()).get("/api/v1/wallet");
    expect(unknown.status).toBe(429);
    expect(unknown.json.code).toBe("RATE_LIMITED");
  });

  test("X-Forwarded-For is not trusted without TRUST_PROXY: another claimed address is still throttled", async () => {
    const res = await server.client(unknownKey()).get("/api/v1/wallet", { headers: { "x-forwarded-for": "203.0.113.9" } });
    expect(res.status).toBe(429);
  });

  test("from the throttled address the right admin token is served; a wrong one is 429", async () => {
    expect((await server.admin.get("/admin/v1/accounts")).status).toBe(200);
    const res = await server.client("not-the-admin-token-0000").get("/admin/v1/accounts");
    expect(res.status).toBe(429);
    expect(res.json.code).toBe("RATE_LIMITED");
  });
});

describe("behind a trusted proxy (TRUST_PROXY): one budget per forwarded client address", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ authFailuresPerMinute: 5, trustProxy: true });
  });
  afterAll(() => server.close());

  const from = (address: string) => ({ headers: { "x-forwarded-for": `198.51.100.200, ${address}` } });

  test("wrong admin tokens count; the address that failed is refused for wrong tokens, never for the right one", async () => {
    const wrong = server.client("not-the-admin-token-0000");
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await wrong.get("/admin/v1/accounts", from("192.0.2.1"))).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    expect((await server.admin.get("/admin/v1/accounts", from("192.0.2.1"))).status).toBe(200);
    expect((await server.admin.get("/admin/v1/accounts", from("192.0.2.2"))).status).toBe(200);
  });

  test("while the credential registry is current, unknown keys are refused from memory: no look-up at all", async () => {
    const selects = watchSelects(server);
    for (let i = 0; i < 4; i++) {
      expect((await server.client(unknownKey()).get("/api/v1/wallet", from("192.0.2.5"))).status).toBe(401);
    }
    selects.stop();
    expect(server.deps.credentials.isCurrent()).toBe(true);
    expect(selects.count()).toBe(0);
  });

  test("without a current registry, an unknown key is answered from memory while it stays unknown; creating a key drops what was remembered", async () => {
    // The registry is no longer kept current: authentication asks the database.
    await server.deps.credentialSync.stop();
    expect(server.deps.credentials.isCurrent()).toBe(false);
    const key = unknownKey();
    const selects = watchSelects(server);
    for (let i = 0; i < 4; i++) {
      expect((await server.client(key).get("/api/v1/wallet", from("192.0.2.3"))).status).toBe(401);
    }
    expect(selects.count()).toBe(1);
    // Keys created in this process are never refused from the negative cache: creation empties it.
    selects.stop();
    await server.createAccount("fresh");
    const again = watchSelects(server);
    expect((await server.client(key).get("/api/v1/wallet", from("192.0.2.4"))).status).toBe(401);
    expect(again.count()).toBe(1);
    again.stop();
  });
});

describe("AuthGuard (in memory, clock given)", () => {
  test("the failure budget is per minute: refused with the seconds left, admitted again when the window ends", () => {
    const guard = new AuthGuard(3);
    const t0 = 1_000_000;
    for (let i = 0; i < 3; i++) {
      guard.admit("192.0.2.7", t0);
      guard.recordFailure("192.0.2.7", t0);
    }
    const refused = (() => {
      try {
        guard.admit("192.0.2.7", t0 + 15_000);
      } catch (error) {
        return error as AppError;
      }
    })();
    expect(refused?.code).toBe("RATE_LIMITED");
    expect(refused?.headers["retry-after"]).toBe("45");
    expect(() => guard.admit("192.0.2.8", t0)).not.toThrow();
    expect(() => guard.admit("192.0.2.7", t0 + 60_000)).not.toThrow();
  });

  test("an IPv6 client's /64 is one budget; an IPv4-mapped address is its IPv4 address", () => {
    expect(throttleSubject("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(throttleSubject("2001:db8:1:2:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
    expect(throttleSubject("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(throttleSubject("::1")).toBe("0:0:0:0::/64");
    expect(throttleSubject("::ffff:192.0.2.7")).toBe("192.0.2.7");
    expect(throttleSubject("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    const guard = new AuthGuard(1);
    guard.recordFailure("2001:db8:1:2::1");
    expect(() => guard.admit("2001:db8:1:2::99")).toThrow();
    expect(() => guard.admit("2001:db8:1:3::1")).not.toThrow();
  });

  test("an unknown key is remembered for 30 seconds, and not at all if a key was issued during the look-up", () => {
    const guard = new AuthGuard(0);
    const t0 = 2_000_000;
    guard.rememberUnknownKey("h1", keysIssued(), t0);
    expect(guard.isUnknownKey("h1", t0 + 29_000)).toBe(true);
    expect(guard.isUnknownKey("h1", t0 + 30_000)).toBe(true);
    expect(guard.isUnknownKey("h1", t0 + 30_001)).toBe(false);
    const before = keysIssued();
    generateApiKey("test");
    guard.rememberUnknownKey("h2", before, t0);
    expect(guard.isUnknownKey("h2", t0)).toBe(false);
  });
});

describe("provider callbacks with a wrong bearer token count against the same budget", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ authFailuresPerMinute: failuresPerMinute });
  });
  afterAll(() => server.close());

  test("after the budget, callbacks from that address get 429 before any token check; nothing is stored", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < failuresPerMinute + 10; i++) {
      const res = await server.anonymous.post(
        "/callbacks/providers/sandbox",
        { event_id: `guess-${i}`, reference: "txn_guess", status: "successful" },
        { headers: { authorization: `Bearer guess-${i}`, "x-provider-signature": "t=1,sha256=00" } },
      );
      statuses.push(res.status);
    }
    expect(statuses.slice(0, failuresPerMinute)).toEqual(Array(failuresPerMinute).fill(401));
    expect(statuses.slice(failuresPerMinute)).toEqual(Array(10).fill(429));
    const stored = await server.deps.db.select().from(providerCallbacks);
    expect(stored).toEqual([]);
  });

  test("from that address a callback with the right token and signature is still served, and stored", async () => {
    const callback = sandboxCallback({
      event_id: "evt-real",
      reference: "txn_unknown_order",
      status: "successful",
      provider_reference: "P-1",
    });
    const res = await server.anonymous.post("/callbacks/providers/sandbox", undefined, {
      raw: callback.raw,
      headers: callback.headers,
    });
    // Authenticated and read: it names no order (404), but it was not refused for others' failures.
    expect(res.status).not.toBe(429);
    expect(res.status).toBe(404);
    const stored = await server.deps.db.select().from(providerCallbacks);
    expect(stored).toHaveLength(1);
    // A right token with a wrong signature is a failure like any other: 429 here.
    const forged = await server.anonymous.post("/callbacks/providers/sandbox", undefined, {
      raw: callback.raw,
      headers: { ...callback.headers, "x-provider-signature": "t=1,sha256=00" },
    });
    expect(forged.status).toBe(429);
  });
});
