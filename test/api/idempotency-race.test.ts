import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { fingerprintOf, runIdempotent } from "../../src/idempotency/protocol.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";

// A second connection committing while the first's transaction is open needs a real PostgreSQL server.
const onPostgres = Boolean(process.env.DATABASE_URL);
let database: TestDatabase;

beforeAll(async () => {
  if (onPostgres) database = await createTestDatabase({ maxConnections: 2 });
});
afterAll(() => database?.drop());

describe.skipIf(!onPostgres)("the claim's snapshot and its advisory lock", () => {
  test("a first request that commits between the claim's snapshot and its lock is replayed, not run again or a 500", async () => {
    const id = { scope: "account:race:test", method: "POST", path: "vendProduct", key: "race-1" };
    const body = { product_code: "mtn-airtime" };
    const other = postgres(database.url ?? "", { max: 1, onnotice: () => {} });
    let runs = 0;
    try {
      const result = await runIdempotent(database.handle.db, id, body, async () => {
        runs += 1;
        // This request's claim saw no record and took the free lock; the first request commits its record now.
        if (runs === 1) {
          await other`insert into idempotency_records (scope, method, path, key, fingerprint, response_status, response_body, expires_at)
                      values (${id.scope}, ${id.method}, ${id.path}, ${id.key}, ${fingerprintOf(body)}, 202, '{"first":true}', now() + interval '1 hour')`;
        }
        return { status: 202, body: '{"second":true}' };
      });
      // The work's own writes were rolled back with the collision; the stored first answer is what the client gets.
      expect(result).toEqual({ status: 202, body: '{"first":true}', replayed: true });
      expect(runs).toBe(1);
      const [count] = await other`select count(*)::int as n from idempotency_records where key = ${id.key}`;
      expect(count?.n).toBe(1);
    } finally {
      await other.end({ timeout: 5 });
    }
  });
});
