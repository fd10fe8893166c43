/**
 * Vend accept throughput (issue 3, bench b). Run by hand against PostgreSQL:
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/vend-accept.ts
 * Spawns the real server in its own process, drives POST /api/v1/vend with 64 concurrent
 * connections, then runs the same SQL transaction directly through the `postgres` driver
 * (no HTTP, no service code) with 64 concurrent callers, and prints the ratio. Target ≥ 0.6.
 * The baseline's statements are the service's: claim the key (advisory lock + stored answer +
 * clock), the idempotency record, the single guarded accept statement, commit. Auth and product
 * lookups are served from the service's caches, so the baseline has none either.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import postgres from "postgres";
import { createTestDatabase } from "../test/helpers/database.ts";
import { childEnv, spawnProcess } from "../test/helpers/process.ts";

const concurrency = 64;
const durationMs = Number(process.env.BENCH_SECONDS ?? 10) * 1000;
const poolSize = 20;
const adminToken = "bench-admin-token-0123456789abcdef";

if (!process.env.DATABASE_URL) {
  console.error("Set DATABASE_URL to a PostgreSQL server (the bench creates and drops its own database).");
  process.exit(2);
}

async function runFor(label: string, once: () => Promise<void>): Promise<number> {
  const deadline = performance.now() + durationMs;
  let done = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        try {
          await once();
          done += 1;
        } catch {
          failed += 1;
        }
      }
    }),
  );
  const perSecond = done / (durationMs / 1000);
  console.log(
    `${label.padEnd(34)} ${perSecond.toFixed(0).padStart(7)} accepts/s  (${done} ok, ${failed} failed, ${concurrency} concurrent)`,
  );
  return perSecond;
}

const database = await createTestDatabase({ maxConnections: 2 });
const url = database.url ?? "";
const server = spawnProcess(
  [process.execPath, join(import.meta.dir, "../src/main.ts")],
  childEnv({
    DATABASE_URL: url,
    PORT: "0",
    ADMIN_TOKEN: adminToken,
    RATE_LIMIT_PER_MINUTE: "0",
    LOG_LEVEL: "error",
    DATABASE_POOL_SIZE: String(poolSize),
  }),
);
try {
  const [, base] = await server.waitFor(/listening on (http:\/\/[^\s]+)/);
  const created = await fetch(`${base}/admin/v1/accounts`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "bench" }),
  }).then((r) => r.json());
  const testKey: string = created.data.keys.find((k: { mode: string }) => k.mode === "test").key;
  const accountId: string = created.data.account.id;
  const auth = { authorization: `Bearer ${testKey}`, "content-type": "application/json" };
  await fetch(`${base}/api/v1/wallet/fund`, {
    method: "POST",
    headers: { ...auth, "idempotency-key": "bench-fund" },
    body: JSON.stringify({ amount_kobo: 90_000_000_000 }),
  });
  const body = JSON.stringify({ product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 });

  const http = await runFor("HTTP POST /api/v1/vend", async () => {
    const res = await fetch(`${base}/api/v1/vend`, {
      method: "POST",
      headers: { ...auth, "idempotency-key": randomUUID() },
      body,
    });
    await res.arrayBuffer();
    if (res.status !== 202) throw new Error(String(res.status));
  });

  // Baseline: the same statements the service runs to accept a vend, straight through the driver.
  const sql = postgres(url, { max: poolSize, onnotice: () => {} });
  const scope = `account:${accountId}:test`;
  const direct = await runFor("same SQL transaction, no HTTP", async () => {
    const key = randomUUID();
    const id = randomUUID();
    await sql.begin(async (tx) => {
      await tx`select pg_try_advisory_xact_lock(hashtextextended(${`${scope}\nPOST\n/api/v1/vend\n${key}`}, 0)) as locked,
                      (extract(epoch from clock_timestamp()) * 1000)::float8 as now_ms,
                      r.response_status, r.response_body, r.fingerprint, r.expires_at <= now() as expired
               from (select 1) as one left join idempotency_records r
                 on r.scope = ${scope} and r.method = 'POST' and r.path = '/api/v1/vend' and r.key = ${key}`;
      await tx`insert into idempotency_records (scope, method, path, key, fingerprint, response_status, response_body, expires_at)
        values (${scope}, 'POST', '/api/v1/vend', ${key}, 'f', 202, '{}', now() + interval '24 hours')`;
      await tx`with held as (
            update wallets set held_kobo = held_kobo + 9700, updated_at = now()
            where account_id = ${accountId} and mode = 'test' and balance_kobo - held_kobo >= 9700
            returning id, balance_kobo, held_kobo
          ), txn as (
            insert into transactions (id, reference, account_id, mode, status, product_code, network, service, destination,
                                      amount_kobo, price_kobo, metadata, client_reference, provider, next_attempt_at)
            select ${id}::uuid, ${`txn_${key.replaceAll("-", "")}`}, ${accountId}::uuid, 'test', 'queued', 'mtn-airtime', 'mtn', 'airtime',
                   '08031234567', 10000, 9700, ${JSON.stringify({ route: "sandbox" })}::jsonb, null, 'sandbox', now()
            from held returning created_at
          ), entry as (
            insert into ledger_entries (wallet_id, kind, amount_kobo, balance_delta_kobo, held_delta_kobo, balance_after_kobo, held_after_kobo, transaction_id)
            select held.id, 'hold', 9700, 0, 9700, held.balance_kobo, held.held_kobo, ${id}::uuid from held
          )
          select (extract(epoch from created_at) * 1000)::float8 as created_ms from txn`;
    });
  });
  await sql.end();
  console.log(`\nratio HTTP / baseline: ${(http / direct).toFixed(2)}  (target ≥ 0.6)`);
} finally {
  await server.stop();
  await database.drop();
}
