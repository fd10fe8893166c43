/**
 * Retention at scale (issue 25): one retention pass (src/retention/pass.ts, the default settings, with no
 * time bound so one pass does it all) over 1,000,000 deletable rows among 1,000,000 kept ones, on PostgreSQL.
 *
 *   Deletable: 400,000 delivered webhook deliveries (100 days old) with one attempt each, 200,000 provider
 *   callbacks (100 days old). Kept: 400,000 deliveries (a day old, or pending) with one attempt each,
 *   200,000 callbacks a day old; and the 800,000 events the deliveries belong to (delivered events are
 *   kept by default).
 *
 * Each round re-seeds the deletable rows, runs VACUUM ANALYZE (this machine runs with autovacuum off; in
 * production autovacuum would clear the dead rows between passes), then times the pass. It prints, over
 * the rounds, min / median / max of the pass's time, rows deleted per second and its longest statement.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/retention.ts
 *
 * BENCH_ROWS (default 1,000,000: deletable rows, as many kept) and BENCH_ROUNDS (default 3) scale it.
 * Creates its own database (and the migrated template it is cloned from) and drops both, on error or Ctrl-C too.
 */
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { type Database, openDatabase } from "../src/db/client.ts";
import { loadConfig } from "../src/load-config.ts";
import { createLogger } from "../src/logger.ts";
import { runRetentionPass } from "../src/retention/pass.ts";
import { retentionKinds } from "../src/retention/retention-settings.ts";
import { retentionStatements } from "../src/roles/retention-statements.ts";
import { envNumber, onCleanup, requirePostgres, runBench } from "./lib/cleanup.ts";
import { serviceDatabase } from "./lib/databases.ts";
import { printFigure } from "./lib/stats.ts";

const base = requirePostgres();
const rows = envNumber("BENCH_ROWS", 1_000_000);
const rounds = envNumber("BENCH_ROUNDS", 3);
const deliveries = Math.round(rows * 0.4);
const callbacks = rows - 2 * deliveries;

/** `count` events with one delivery each (and its attempt), `days` old, in `status`; ids prefixed `tag`. */
async function seedDeliveries(pg: postgres.Sql, tag: string, count: number, days: number, status: string) {
  await pg.unsafe(`
    with ids as (select n, '${tag}' || n as event_id from generate_series(1, ${count}) n),
    e as (
      insert into events (id, account_id, mode, type, payload, created_at)
      select event_id, (select id from accounts limit 1), 'test', 'transaction.successful', '{"data":{}}'::jsonb,
        now() - make_interval(days => ${days}) - n * interval '1 ms'
      from ids returning id, created_at)
    insert into webhook_deliveries (event_id, endpoint_id, status, attempts, created_at, updated_at, next_attempt_at)
    select e.id, (select id from webhook_endpoints limit 1), '${status}', 1, e.created_at, e.created_at,
      case when '${status}' = 'pending' then now() + interval '1 hour' end
    from e`);
  await pg.unsafe(`
    insert into webhook_attempts (delivery_id, attempt, status_code, duration_ms, attempted_at)
    select d.id, 1, 200, 12, d.updated_at from webhook_deliveries d where d.event_id like '${tag}%'`);
}

async function seedCallbacks(pg: postgres.Sql, count: number, days: number) {
  await pg.unsafe(`
    insert into provider_callbacks (provider, reference, headers, raw_body, signature_valid, http_status, result_code, received_at)
    select 'sandbox', 'txn_' || n, '{"content-type":"application/json"}'::jsonb, '{"status":"successful"}', true, 200,
      'applied', now() - make_interval(days => ${days}) - n * interval '1 ms'
    from generate_series(1, ${count}) n`);
}

async function seedDeletable(pg: postgres.Sql, round: number) {
  await seedDeliveries(pg, `evt_old${round}_`, deliveries, 100, "succeeded");
  await seedCallbacks(pg, callbacks, 100);
}

/** Each kind's statement as planned on the seeded tables: an index from the oldest row to the cutoff. */
async function printPlans(db: Database) {
  for (const kind of retentionKinds) {
    const statement = retentionStatements[kind].build(sql`now() - make_interval(days => 30)`, 1000);
    const plan = (await db.execute(sql`explain ${statement}`)) as unknown as { "QUERY PLAN": string }[];
    const scans = plan.map((row) => row["QUERY PLAN"]).filter((line) => /Scan|Limit/.test(line));
    console.log(`${kind}:\n${scans.map((line) => `  ${line.trim()}`).join("\n")}`);
  }
}

await runBench(async () => {
  const url = await serviceDatabase(base);
  const pg = postgres(url, { max: 1, onnotice: () => {} });
  onCleanup("close the seeding connection", () => pg.end({ timeout: 5 }));
  await pg`insert into accounts (name) values ('bench')`;
  await pg`insert into webhook_endpoints (account_id, mode, url, secret)
    select id, 'test', 'https://example.com/hooks', 'whsec_bench' from accounts`;
  const started = performance.now();
  await seedDeliveries(pg, "evt_new_", Math.round(deliveries * 0.9), 1, "succeeded");
  await seedDeliveries(pg, "evt_pending_", deliveries - Math.round(deliveries * 0.9), 1, "pending");
  await seedCallbacks(pg, callbacks, 1);
  console.log(
    `seeded ${rows.toLocaleString("en")} kept rows (and ${(2 * deliveries).toLocaleString("en")} events) in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  const [autovacuum] = await pg<{ autovacuum: string }[]>`show autovacuum`;
  console.log(`autovacuum: ${autovacuum?.autovacuum} (dead rows are vacuumed by the bench between rounds, not timed)`);

  const handle = await openDatabase({ databaseUrl: url, maxConnections: 2 });
  onCleanup("close the service's pool", () => handle.close());
  const config = loadConfig({ RETENTION_PASS_SECONDS: "3600" });
  const deps = { db: handle.db, config, logger: createLogger("error") };
  const seconds: number[] = [];
  const perSecond: number[] = [];
  const longest: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const seeding = performance.now();
    await seedDeletable(pg, round);
    await pg.unsafe("vacuum analyze");
    if (round === 1) await printPlans(handle.db);
    const passStarted = performance.now();
    const pass = await runRetentionPass(deps, retentionStatements);
    const elapsed = (performance.now() - passStarted) / 1000;
    const [left] = await pg<{ n: number }[]>`
      select (select count(*) from webhook_deliveries)::int + (select count(*) from webhook_attempts)::int
        + (select count(*) from provider_callbacks)::int as n`;
    if (pass.total !== rows || left?.n !== rows) throw new Error(`round ${round}: deleted ${pass.total}, left ${left?.n}`);
    seconds.push(elapsed);
    perSecond.push(pass.total / elapsed);
    longest.push(pass.longestMs);
    console.log(
      `round ${round}: seeded in ${((performance.now() - seeding) / 1000 - elapsed).toFixed(0)} s; deleted ${JSON.stringify(pass.deleted)} ` +
        `in ${elapsed.toFixed(1)} s, ${pass.statements} statements, longest ${pass.longestMs.toFixed(0)} ms`,
    );
  }
  console.log(
    `\nretention pass over ${rows.toLocaleString("en")} deletable + ${rows.toLocaleString("en")} kept rows, ${rounds} rounds (min / median / max):`,
  );
  printFigure("pass time", seconds, "s");
  printFigure("rows deleted per second", perSecond, "rows/s");
  printFigure("longest single statement", longest, "ms");
});
