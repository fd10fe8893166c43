/**
 * Listing cost by depth: p50/p95 of GET /api/v1/transactions (limit 100) for the first page and for a page
 * 50,000 rows deep, over HTTP against the real server. Keyset paging should make them cost the same.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/list-depth.ts
 *
 * Seeding is one long statement per account, so its connection has no statement timeout to speak of.
 * Creates its own database and drops it at the end, also on an error or Ctrl-C (in-memory PGlite without DATABASE_URL).
 */
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { type Database, type DbHandle, openDatabase } from "../src/db/client.ts";
import { runMigrations } from "../src/db/migrate.ts";
import { randomBase62 } from "../src/lib/random.ts";
import { loadConfig } from "../src/load-config.ts";
import { createLogger } from "../src/logger.ts";
import { createDeps, startServer } from "../src/server.ts";
import { createAccount } from "../src/wallet/account-records.ts";
import { onCleanup, runBench } from "./lib/cleanup.ts";

const rowsForAccount = 200_000;
const otherRows = 50_000;
const depth = 50_000;
const limit = 100;
const warmup = 30;
const samples = 200;

const baseUrl = process.env.DATABASE_URL || undefined;
const databaseName = `vend_bench_${randomBase62(8).toLowerCase()}`;

async function adminSql(statement: string): Promise<void> {
  const client = postgres(baseUrl ?? "", { max: 1, onnotice: () => {} });
  try {
    await client.unsafe(statement);
  } finally {
    await client.end({ timeout: 5 });
  }
}

function urlFor(database: string): string {
  const url = new URL(baseUrl ?? "");
  url.pathname = `/${database}`;
  return url.toString();
}

/** `count` rows for one account and mode in one statement; every fifth row shares its neighbour's millisecond. */
async function seedRows(db: Database, accountId: string, mode: "test" | "live", count: number): Promise<void> {
  const salt = randomBase62(8);
  await db.execute(sql`
    insert into transactions (reference, account_id, mode, status, product_code, network, service, destination,
      amount_kobo, price_kobo, metadata, client_reference, provider, created_at, updated_at, completed_at)
    select 'txn_' || substr(md5(g::text || ${salt}) || md5(${salt} || g::text), 1, 24),
      ${accountId}::uuid, ${mode},
      (array['successful','successful','successful','failed','pending','queued'])[1 + g % 6],
      (array['mtn','airtel','glo','9mobile'])[1 + g % 4] || '-airtime',
      (array['mtn','airtel','glo','9mobile'])[1 + g % 4],
      'airtime',
      '080' || lpad((g * 7919 % 100000000)::text, 8, '0'),
      5000 + (g % 20) * 5000,
      (5000 + (g % 20) * 5000) * 97 / 100,
      '{"data_type":"airtime","route":"sandbox"}'::jsonb,
      case when g % 3 = 0 then null else 'order-' || g end,
      'sandbox', t.at, t.at,
      case when g % 6 < 4 then t.at + interval '4 seconds' end
    from generate_series(1, ${count}) g
    cross join lateral (select now() - interval '1 hour' - (g - g / 5) * interval '250 milliseconds' as at) t`);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function timed(
  url: string,
  key: string,
): Promise<{ ms: number; body: { data: { page: { next_cursor: string | null } } } }> {
  const started = performance.now();
  const response = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  const body = await response.json();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${JSON.stringify(body)}`);
  return { ms, body };
}

async function openBenchDatabase(): Promise<DbHandle> {
  if (!baseUrl) {
    const handle = await openDatabase({ dataDir: "memory://" });
    onCleanup("close the database", () => handle.close());
    return handle;
  }
  await adminSql(`create database ${databaseName}`);
  onCleanup(`drop ${databaseName}`, () => adminSql(`drop database if exists ${databaseName} with (force)`));
  const handle = await openDatabase({ databaseUrl: urlFor(databaseName), maxConnections: 10, statementTimeoutMs: 600_000 });
  onCleanup("close the database", () => handle.close());
  return handle;
}

async function run(handle: DbHandle): Promise<void> {
  await runMigrations(handle);
  const { account, keys } = await createAccount(handle.db, "Bench Ltd");
  const other = await createAccount(handle.db, "Noise Ltd");
  const key = keys.find((k) => k.mode === "test")?.key ?? "";
  let started = performance.now();
  await seedRows(handle.db, account.id, "test", rowsForAccount);
  await seedRows(handle.db, other.account.id, "test", otherRows);
  await seedRows(handle.db, account.id, "live", otherRows);
  await handle.db.execute(sql`analyze transactions`);
  console.log(
    `engine ${handle.kind}; seeded ${rowsForAccount + 2 * otherRows} rows in ${Math.round(performance.now() - started)} ms`,
  );

  const config = { ...loadConfig({}), databaseUrl: handle.url, logLevel: "silent" as const, rateLimitPerMinute: 0 };
  const deps = await createDeps(config, handle, createLogger("silent"));
  const server = startServer(deps, { port: 0, hostname: "127.0.0.1" });
  try {
    const pageUrl = (cursor?: string) =>
      `${server.url}/api/v1/transactions?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    started = performance.now();
    let cursor: string | undefined;
    for (let walked = 0; walked < depth; walked += limit) {
      cursor = (await timed(pageUrl(cursor), key)).body.data.page.next_cursor ?? undefined;
    }
    if (!cursor) throw new Error("ran out of pages before the target depth");
    console.log(`walked ${depth / limit} pages to depth ${depth} in ${Math.round(performance.now() - started)} ms`);

    const first = pageUrl();
    const deep = pageUrl(cursor);
    for (let i = 0; i < warmup; i++) await Promise.all([timed(first, key), timed(deep, key)]);
    const firstTimes: number[] = [];
    const deepTimes: number[] = [];
    for (let i = 0; i < samples; i++) {
      firstTimes.push((await timed(first, key)).ms);
      deepTimes.push((await timed(deep, key)).ms);
    }
    const report = (label: string, times: number[]) => {
      const sorted = [...times].sort((x, y) => x - y);
      console.log(
        `${label}: p50 ${percentile(sorted, 50).toFixed(2)} ms  p95 ${percentile(sorted, 95).toFixed(2)} ms  (${times.length} requests)`,
      );
      return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
    };
    const f = report(`first page      (limit ${limit})`, firstTimes);
    const d = report(`page at ${depth} (limit ${limit})`, deepTimes);
    const ratio = d.p50 / f.p50;
    console.log(
      `ratio deep/first: p50 ${ratio.toFixed(2)}  p95 ${(d.p95 / f.p95).toFixed(2)}  (target <= 1.3: ${ratio <= 1.3 ? "met" : "NOT met"})`,
    );
  } finally {
    await server.stop();
    await deps.waiters.stop();
    await deps.providers.health.stop();
    deps.metrics.close();
  }
}

await runBench(async () => {
  await run(await openBenchDatabase());
});
