import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { hashApiKey } from "../../src/auth/keys.ts";
import { queryRows } from "../../src/db/rows.ts";
import { apiUrl, spawnService } from "../helpers/cluster.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { HttpClient, type HttpResult } from "../helpers/http.ts";
import type { StartedProcess } from "../helpers/process.ts";
import { testAdminToken } from "../helpers/server.ts";

// Several processes on one database need a real PostgreSQL server (CI always has one).
const postgres = Boolean(process.env.DATABASE_URL);
const limit = 100;
const workersPerProcess = 4;

/**
 * The acceptance test of the shared limit: two real API processes on one database, one key, requests to
 * both until each has refused one: exactly the limit is answered between them, not twice it. Windows are
 * the clock's minutes; a run that crossed into the next minute (the key's budget then counts in two
 * rows) is repeated with a fresh key, which is then at the start of a minute.
 */
describe.skipIf(!postgres)("two API processes on one database share one key's limit", () => {
  const processes: StartedProcess[] = [];
  let database: TestDatabase;
  let urls: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase({ maxConnections: 4 });
    const env = { RATE_LIMIT_PER_MINUTE: String(limit), ADMIN_TOKEN: testAdminToken };
    for (let i = 0; i < 2; i++) processes.push(spawnService(database.url ?? "", "api", env));
    urls = await Promise.all(processes.map(apiUrl));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(processes.splice(0).map((p) => p.stop("SIGKILL")));
    await database.drop();
  });

  async function freshKey(name: string): Promise<string> {
    const res = await new HttpClient(urls[0] ?? "", testAdminToken).post("/admin/v1/accounts", { name });
    expect(res.status).toBe(201);
    const keys = res.json.data.keys as { mode: string; key: string }[];
    return keys.find((k) => k.mode === "test")?.key ?? "";
  }

  /** Each process gets `workersPerProcess` clients sending one request after another until each is refused. */
  async function spendAcrossProcesses(key: string): Promise<{ url: string; answer: HttpResult }[]> {
    const answers: { url: string; answer: HttpResult }[] = [];
    await Promise.all(
      urls.flatMap((url) =>
        Array.from({ length: workersPerProcess }, async () => {
          const client = new HttpClient(url, key);
          for (;;) {
            const answer = await client.get("/api/v1/wallet");
            answers.push({ url, answer });
            if (answer.status !== 200) return;
          }
        }),
      ),
    );
    return answers;
  }

  async function windowsOf(key: string): Promise<number> {
    const [row] = await queryRows<{ windows: number }>(
      database.handle.db,
      sql`select count(*)::int as windows from rate_limit_windows
        where subject = (select id::text from api_keys where key_hash = ${hashApiKey(key)})`,
    );
    return Number(row?.windows ?? 0);
  }

  test("exactly the limit is answered 200 across both, the rest 429 with Retry-After, the RateLimit headers agree", async () => {
    let answers: { url: string; answer: HttpResult }[] = [];
    for (let attempt = 1; ; attempt++) {
      const key = await freshKey(`shared-${attempt}`);
      answers = await spendAcrossProcesses(key);
      if ((await windowsOf(key)) === 1) break;
      // The run crossed a minute boundary; the next one starts at the beginning of a minute.
      expect(attempt).toBeLessThan(3);
    }
    const ok = answers.filter(({ answer }) => answer.status === 200);
    const refused = answers.filter(({ answer }) => answer.status !== 200);
    expect(ok).toHaveLength(limit);
    expect(refused).toHaveLength(urls.length * workersPerProcess);
    // Both processes served part of the budget: it really was shared, not one process's alone.
    for (const url of urls) expect(ok.filter((a) => a.url === url).length).toBeGreaterThan(0);
    for (const { answer } of answers) {
      const reset = Number(answer.headers.get("ratelimit-reset"));
      expect(answer.headers.get("ratelimit-limit")).toBe(String(limit));
      expect(answer.headers.get("ratelimit-policy")).toBe(`${limit};w=60`);
      expect(reset).toBeGreaterThanOrEqual(1);
      expect(reset).toBeLessThanOrEqual(60);
      const remaining = Number(answer.headers.get("ratelimit-remaining"));
      if (answer.status === 200) {
        expect(remaining).toBeGreaterThanOrEqual(0);
        expect(remaining).toBeLessThan(limit);
        expect(answer.headers.get("retry-after")).toBeNull();
      } else {
        expect(answer.status).toBe(429);
        expect(answer.json.code).toBe("RATE_LIMITED");
        expect(remaining).toBe(0);
        expect(answer.headers.get("retry-after")).toBe(String(reset));
      }
    }
    // Each process alone counts its answers down: its Remaining never goes up within the window.
    for (const url of urls) {
      const mine = answers.filter((a) => a.url === url && a.answer.status === 200);
      const remaining = mine.map((a) => Number(a.answer.headers.get("ratelimit-remaining")));
      expect(new Set(remaining).size).toBe(remaining.length);
    }
  }, 120_000);
});
