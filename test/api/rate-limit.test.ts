import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Database } from "../../src/db/client.ts";
import type { Executor } from "../../src/db/executor.ts";
import { queryRows } from "../../src/db/rows.ts";
import { RateLimiter } from "../../src/http/rate-limit.ts";
import { randomBase62 } from "../../src/lib/random.ts";
import { loadConfig } from "../../src/load-config.ts";
import type { HttpResult } from "../helpers/http.ts";
import { captureLogs, startTestServer, type TestServer } from "../helpers/server.ts";

/**
 * The per-key limit over real HTTP, its RateLimit headers on every kind of answer, the per-address budget
 * for requests without a usable key (before any database work), failing open, and the shared windows.
 * Limiters here run on a frozen clock, so no test depends on where in the minute it runs.
 */
const t0 = Date.UTC(2030, 0, 1, 12, 0, 30);
const minute = 60_000;

function limiterFor(server: TestServer, perMinute: number, options: { db?: () => Executor; now?: () => number } = {}) {
  return new RateLimiter({
    perMinute,
    db: options.db ?? (() => server.deps.db),
    logger: () => server.deps.logger,
    now: options.now ?? (() => t0),
  });
}

function rateHeaders(res: HttpResult) {
  const number = (name: string) => {
    const value = res.headers.get(name);
    return value === null ? null : Number(value);
  };
  return {
    limit: number("ratelimit-limit"),
    remaining: number("ratelimit-remaining"),
    reset: number("ratelimit-reset"),
    policy: res.headers.get("ratelimit-policy"),
    retryAfter: number("retry-after"),
  };
}

async function windowRows(server: TestServer): Promise<{ subject: string; started: number; used: number }[]> {
  const rows = await queryRows<{ subject: string; started: string; used: number }>(
    server.deps.db,
    sql`select subject, (extract(epoch from window_start) * 1000)::bigint as started, used from rate_limit_windows order by window_start`,
  );
  return rows.map((row) => ({ ...row, started: Number(row.started), used: Number(row.used) }));
}

/** A database that fails every statement the way an unreachable server does, counting what was asked of it. */
function unreachableDatabase(): { db: Database; touched(): number } {
  let touched = 0;
  const db = new Proxy(
    {},
    {
      get() {
        touched += 1;
        return () => {
          throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
        };
      },
    },
  ) as Database;
  return { db, touched: () => touched };
}

describe("per-key limit over HTTP: headers on success, errors and 429", () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ rateLimitPerMinute: 5 });
    server.deps.rateLimiter = limiterFor(server, 5);
    key = (await server.createAccount("limited")).testKey;
  });
  afterAll(() => server.close());

  test("5 requests answered with the budget counting down, the 6th 429 with Retry-After equal to RateLimit-Reset; errors count and carry the headers", async () => {
    const client = server.client(key);
    const answers: HttpResult[] = [];
    for (let i = 0; i < 3; i++) answers.push(await client.get("/api/v1/wallet"));
    // A validation error after authentication spends from the key's budget and says so.
    answers.push(await client.get("/api/v1/transactions", { query: { limit: "not-a-number" } }));
    answers.push(await client.get("/api/v1/wallet"));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 400, 200]);
    expect(answers.map((r) => rateHeaders(r).remaining)).toEqual([4, 3, 2, 1, 0]);
    for (const answer of answers) {
      expect(rateHeaders(answer)).toMatchObject({ limit: 5, reset: 30, policy: "5;w=60", retryAfter: null });
    }
    const refused = await client.get("/api/v1/wallet");
    expect(refused.status).toBe(429);
    expect(refused.json.code).toBe("RATE_LIMITED");
    expect(rateHeaders(refused)).toEqual({ limit: 5, remaining: 0, reset: 30, policy: "5;w=60", retryAfter: 30 });
    // The window is one row, shared by every process: 5 claimed, for the key, in the frozen clock's minute.
    const rows = await windowRows(server);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.used).toBe(5);
    expect(rows[0]?.started).toBe(t0 - 30_000);
  });

  test("the next window gives the whole budget back; windows two minutes old are deleted", async () => {
    let now = t0 + minute;
    server.deps.rateLimiter = limiterFor(server, 5, { now: () => now });
    const res = await server.client(key).get("/api/v1/wallet");
    expect(res.status).toBe(200);
    expect(rateHeaders(res).remaining).toBe(4);
    expect(await windowRows(server)).toHaveLength(2);
    now = t0 + 2 * minute;
    // The window before the previous one goes; the previous one stays (another process may lag behind).
    expect(await server.deps.rateLimiter.deleteOldWindows()).toBe(1);
    expect(await windowRows(server)).toHaveLength(1);
  });
});

describe("requests without a usable key: the address's budget, before any database work", () => {
  let server: TestServer;
  const budget = 4;
  const from = (address: string) => ({ headers: { "x-forwarded-for": address } });

  beforeAll(async () => {
    // The request log off: its writer keeps up to 20 of an address's refusals a minute and writes them a moment
    // after the answers, which would meet the database taken away below. What it keeps of a flood is tested in
    // test/api/request-log-overload.test.ts; what is tested here is the requests' own path.
    server = await startTestServer({
      rateLimitPerMinute: 100,
      authFailuresPerMinute: budget,
      trustProxy: true,
      requestLogs: { ...loadConfig({}).requestLogs, enabled: false },
    });
    server.deps.rateLimiter = limiterFor(server, 100);
  });
  afterAll(() => server.close());

  test("401s show the address's failure budget counting down; past it 429 with the same headers and Retry-After", async () => {
    const statuses: number[] = [];
    const remaining: (number | null)[] = [];
    for (let i = 0; i < budget + 2; i++) {
      const res = await server.anonymous.get("/api/v1/wallet", from("192.0.2.10"));
      statuses.push(res.status);
      remaining.push(rateHeaders(res).remaining);
      expect(rateHeaders(res)).toMatchObject({ limit: budget, policy: `${budget};w=60` });
      const reset = rateHeaders(res).reset ?? 0;
      expect(reset).toBeGreaterThanOrEqual(1);
      expect(reset).toBeLessThanOrEqual(60);
      if (res.status === 429) expect(rateHeaders(res).retryAfter).toBe(reset);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 429, 429]);
    expect(remaining).toEqual([3, 2, 1, 0, 0, 0]);
  });

  test("a flood without credentials, with malformed and with unknown keys is refused with no database access at all", async () => {
    // Spend the budget of another address with unknown keys (each is one look-up), then take the database away.
    for (let i = 0; i < budget; i++) {
      const res = await server.client(`rg_test_${randomBase62(40)}`).get("/api/v1/wallet", from("2001:db8:7:7::1"));
      expect(res.status).toBe(401);
    }
    const real = server.deps.db;
    const unreachable = unreachableDatabase();
    server.deps.db = unreachable.db;
    try {
      const started = performance.now();
      const senders = [
        () => server.anonymous.get("/api/v1/wallet", from("2001:db8:7:7::2")),
        () => server.client("not-a-key").post("/api/v1/vend", {}, from("2001:db8:7:7:ffff::3")),
        () => server.client(`rg_live_${randomBase62(40)}`).get("/api/v1/transactions", from("2001:db8:7:7::4")),
      ];
      const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => senders[i % senders.length]?.()));
      expect(answers.map((r) => r?.status)).toEqual(Array(300).fill(429));
      expect(answers.every((r) => r && rateHeaders(r).remaining === 0 && rateHeaders(r).limit === budget)).toBe(true);
      expect(unreachable.touched()).toBe(0);
      // Answered from memory: no connect timeout was waited out (a generous bound for a loaded machine).
      expect(performance.now() - started).toBeLessThan(20_000);
    } finally {
      server.deps.db = real;
    }
  });
});

describe("limits turned off (0): no headers, no database work", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  test("answers carry no RateLimit headers and no window is written", async () => {
    const { testKey } = await server.createAccount("unlimited");
    const ok = await server.client(testKey).get("/api/v1/wallet");
    const unauthenticated = await server.anonymous.get("/api/v1/wallet");
    expect([ok.status, unauthenticated.status]).toEqual([200, 401]);
    for (const res of [ok, unauthenticated])
      expect(rateHeaders(res)).toMatchObject({ limit: null, remaining: null, reset: null });
    expect(await windowRows(server)).toEqual([]);
  });
});

describe("the shared store cannot be reached: fail open, counted in this process", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ rateLimitPerMinute: 3 });
  });
  afterAll(() => server.close());

  test("requests are answered (not 500), one error line is logged, and the limit still holds in this process", async () => {
    const { testKey } = await server.createAccount("outage");
    const unreachable = unreachableDatabase();
    server.deps.rateLimiter = limiterFor(server, 3, { db: () => unreachable.db });
    const logs = captureLogs(server);
    const statuses: number[] = [];
    try {
      for (let i = 0; i < 5; i++) statuses.push((await server.client(testKey).get("/api/v1/wallet")).status);
    } finally {
      logs.restore();
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const outageLines = logs.lines.filter((line) => line.includes("rate limit store unavailable"));
    expect(outageLines).toHaveLength(1);
    expect(outageLines[0]).toContain('"level":50');
  });
});

describe("RateLimiter on the real database (frozen clock)", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  async function spend(limiter: RateLimiter, subject: string, count: number): Promise<number> {
    const results = await Promise.all(Array.from({ length: count }, () => limiter.acquire(subject)));
    return results.filter((r) => r.allowed).length;
  }

  test("a lone process gets the whole limit, in far fewer claims than requests", async () => {
    let claims = 0;
    const counting = new Proxy(server.deps.db, {
      get(target, property) {
        if (property === "execute") claims += 1;
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as Database;
    const limiter = limiterFor(server, 600, { db: () => counting });
    let allowed = 0;
    for (let i = 0; i < 650; i++) if ((await limiter.acquire("lone")).allowed) allowed += 1;
    expect(allowed).toBe(600);
    // Blocks of an eighth of what is left: about 8 ln(600/8) + 8 claims, and one that finds the window spent.
    expect(claims).toBeGreaterThan(10);
    expect(claims).toBeLessThan(60);
  });

  test("a clock stepped back stays in the window already reached: no older window reopened, Reset at most 60", async () => {
    let now = t0 + 10 * minute;
    const limiter = limiterFor(server, 10, { now: () => now });
    expect((await limiter.acquire("stepped")).status).toMatchObject({ remaining: 9, resetSeconds: 30 });
    now = t0 + 9 * minute;
    expect((await limiter.acquire("stepped")).status).toMatchObject({ remaining: 8, resetSeconds: 60 });
    const rows = await windowRows(server);
    expect(rows.filter((row) => row.subject === "stepped").map((row) => row.started)).toEqual([t0 - 30_000 + 10 * minute]);
  });

  test("three processes' limiters on one database, racing: exactly the limit between them, and each sees 429 after", async () => {
    const limiters = [limiterFor(server, 97), limiterFor(server, 97), limiterFor(server, 97)];
    const allowed = await Promise.all(limiters.map((limiter) => spend(limiter, "shared", 120)));
    expect(allowed.reduce((a, b) => a + b, 0)).toBe(97);
    for (const limiter of limiters) expect((await limiter.acquire("shared")).allowed).toBe(false);
    const [row] = await queryRows<{ used: number }>(
      server.deps.db,
      sql`select used from rate_limit_windows where subject = 'shared'`,
    );
    // `used` counts claims; a claim that crosses the limit is added whole, so it may end a little above.
    expect(row?.used).toBeGreaterThanOrEqual(97);
  });
});
