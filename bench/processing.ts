/**
 * Processing throughput (issue 4, bench a). Run by hand against PostgreSQL:
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/processing.ts
 * N queued vends (sandbox, instant success) are processed by 2 real worker processes; the
 * baseline runs the same SQL cycle (claim a batch and read its rows in one query; per vend (its product
 * comes from the process's catalogue cache, so neither reads it): record the
 * provider order, then the single completion statement: state, capture + ledger entry, outbox event
 * and deliveries, NOTIFYs) in a tight loop through the `postgres` driver, 2 loops side by side,
 * without the service code. Prints vends/s for each and the ratio (target ≥ 0.5).
 */
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { apiUrl, finalCounter, fundDefaultAccount, spawnService, vendMany } from "../test/helpers/cluster.ts";
import { createTestDatabase } from "../test/helpers/database.ts";

const count = Number(process.env.BENCH_VENDS ?? 3000);
/** Worker processes (default 2, the issue's setting); BENCH_WORKER_PROCESSES=1 shows what one process does. */
const processCount = Number(process.env.BENCH_WORKER_PROCESSES ?? 2);
const batch = 16;

if (!process.env.DATABASE_URL) {
  console.error("Set DATABASE_URL to a PostgreSQL server (the bench creates and drops its own database).");
  process.exit(2);
}

const database = await createTestDatabase({ maxConnections: 4 });
const url = database.url ?? "";
const api = spawnService(url, "api", { LOG_LEVEL: "error" });
const workers: ReturnType<typeof spawnService>[] = [];
try {
  const base = await apiUrl(api);
  const [, key] = await api.waitFor(/Test API key \(shown once, store it now\): (rg_test_\w+)/);
  await fundDefaultAccount(base, key ?? "", 1_000_000_000);

  // Service: accept 2N vends first (not timed); the workers start on the first N only after
  // the baseline has used the other N, so both process the same kind of rows.
  await vendMany([base], key ?? "", count * 2, 64);
  const sql = postgres(url, { max: 4, onnotice: () => {} });
  const all = await sql`select id from transactions order by created_at, id`;
  const serviceIds = all.slice(0, count).map((r) => r.id as string);
  const baselineIds = all.slice(count).map((r) => r.id as string);
  // Parked (not due) until their turn.
  await sql`update transactions set next_attempt_at = 'infinity'`;

  // Baseline: the same statements, straight through the driver.
  const baselineStarted = performance.now();
  await sql`update transactions set next_attempt_at = now() where id = any(${baselineIds}::uuid[])`;
  await Promise.all(
    [1, 2].map(async (n) => {
      for (;;) {
        const claimed = await sql`with due as (
            select id, status as previous_status from transactions
            where next_attempt_at <= now() and (status = 'queued' or (status in ('pending','processing') and (lease_expires_at is null or lease_expires_at < now())))
            order by next_attempt_at limit ${batch} for update skip locked)
          update transactions t set status = case when t.status = 'queued' then 'processing' else t.status end,
            lease_owner = ${`baseline-${n}`}, lease_expires_at = now() + make_interval(secs => 30), attempts = t.attempts + 1, updated_at = now()
          from due where t.id = due.id returning t.id, t.reference, due.previous_status, t.attempts`;
        if (claimed.length === 0) break;
        const rows = await sql`select * from transactions where id = any(${claimed.map((c) => c.id as string)}::uuid[])`;
        await Promise.all(
          claimed.map(async (c) => {
            const t = rows.find((r) => r.id === c.id);
            await sql`insert into sandbox_orders (reference, provider_reference, status, result) values (${c.reference}, ${`SBX-${randomUUID().slice(0, 12)}`}, 'successful', '{}'::jsonb)
              on conflict (reference) do update set vend_count = sandbox_orders.vend_count + 1 returning *`;
            const eventId = `evt_${randomUUID().replaceAll("-", "")}`;
            const at = new Date().toISOString();
            await sql`with txn as (
                update transactions set status = 'successful', completed_at = ${at}::timestamptz, updated_at = ${at}::timestamptz,
                    metadata = ${JSON.stringify(t?.metadata ?? {})}::jsonb, provider_reference = ${"SBX"}, failure_reason = ${null},
                    lease_owner = null, lease_expires_at = null, next_attempt_at = null
                where id = ${c.id}::uuid and status = ${t?.status} and updated_at = ${t?.updated_at}
                returning id, account_id, mode, price_kobo, reference
              ), settled as (
                update wallets w set held_kobo = w.held_kobo - txn.price_kobo,
                    balance_kobo = w.balance_kobo - (case when ${"capture"} = 'capture' then txn.price_kobo else 0 end), updated_at = now()
                from txn where w.account_id = txn.account_id and w.mode = txn.mode
                returning w.id, w.balance_kobo, w.held_kobo, txn.price_kobo, txn.id as transaction_id
              ), entry as (
                insert into ledger_entries (wallet_id, kind, amount_kobo, balance_delta_kobo, held_delta_kobo, balance_after_kobo, held_after_kobo, transaction_id)
                select id, ${"capture"}, price_kobo, (case when ${"capture"} = 'capture' then -price_kobo else 0 end), -price_kobo, balance_kobo, held_kobo, transaction_id
                from settled where price_kobo > 0
              ), event as (
                insert into events (id, account_id, mode, type, transaction_id, payload, created_at)
                select ${eventId}, txn.account_id, txn.mode, 'transaction.successful', txn.id, ${JSON.stringify({ id: eventId, data: t ?? {} })}::jsonb, ${at}::timestamptz
                from txn returning id, account_id, mode
              ), deliveries as (
                insert into webhook_deliveries (event_id, endpoint_id, status, next_attempt_at)
                select event.id, e.id, 'pending', now() from event
                join webhook_endpoints e on e.account_id = event.account_id and e.mode = event.mode and e.deleted_at is null
                returning event_id
              )
              select count(*)::int as changed,
                     (select pg_notify('vend_webhook_due', ${eventId}) where exists (select 1 from deliveries)) as webhooks_due,
                     (select pg_notify('vend_txn_final', ${c.reference}) where exists (select 1 from txn)) as final_announced
              from txn`;
          }),
        );
      }
    }),
  );
  const baselineSeconds = (performance.now() - baselineStarted) / 1000;

  // Service: real worker processes, started and ready before the clock starts.
  const finals = await finalCounter(database.handle);
  for (let i = 0; i < processCount; i++) {
    workers.push(
      spawnService(url, "worker", {
        WORKER_CONCURRENCY: String(process.env.BENCH_WORKER_CONCURRENCY ?? batch),
        WORKER_POLL_MS: "50",
        LOG_LEVEL: "error",
      }),
    );
  }
  await Promise.all(workers.map((worker) => worker.waitFor(/Vend worker running/)));
  const serviceStarted = performance.now();
  await sql`update transactions set next_attempt_at = now() where id = any(${serviceIds}::uuid[])`;
  await sql`select pg_notify('vend_work', '')`;
  await finals.reached(count, 300_000);
  const serviceSeconds = (performance.now() - serviceStarted) / 1000;
  await finals.stop();
  await sql.end();

  const service = count / serviceSeconds;
  const baseline = count / baselineSeconds;
  console.log(
    `service: ${processCount} worker process(es)     ${service.toFixed(0).padStart(6)} vends/s  (${count} in ${serviceSeconds.toFixed(2)} s)`,
  );
  console.log(
    `baseline: same SQL cycle, 2 loops   ${baseline.toFixed(0).padStart(6)} vends/s  (${count} in ${baselineSeconds.toFixed(2)} s)`,
  );
  console.log(`\nratio service / baseline: ${(service / baseline).toFixed(2)}  (target ≥ 0.5)`);
} finally {
  await Promise.all([...workers, api].map((p) => p.stop("SIGTERM")));
  await database.drop();
}
