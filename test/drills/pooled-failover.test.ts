import { afterAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { type DbHandle, openDatabase } from "../../src/db/client.ts";
import { runMigrations } from "../../src/db/migrate.ts";
import { queryRows } from "../../src/db/rows.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { apiUrl, fundDefaultAccount, spawnService } from "../helpers/cluster.ts";
import { type DrillLoadResult, everyOrderFinal, fundingsInLedger, runDrillLoad } from "../helpers/drill-load.ts";
import { canRunPgbouncer } from "../helpers/pgbouncer.ts";
import { canCreateClusters, createPrivateCluster, createStandby, type PrivateCluster } from "../helpers/private-cluster.ts";
import type { StartedProcess } from "../helpers/process.ts";
import { serviceRoleGrants } from "../helpers/service-role.ts";
import { type SwitchablePgbouncer, startSwitchablePgbouncer } from "../helpers/switchable-pgbouncer.ts";
import { waitUntil } from "../helpers/wait.ts";

// PgBouncer (transaction mode, server_login_retry = 1) in front of a primary with a synchronous standby; the
// service (2 API processes and a worker, as a role that owns nothing) reaches the servers through it, and
// LISTENs and migrates through a multi-host direct URL. Under load: PAUSE/RESUME and an online restart (-R),
// then the standby promoted, the old primary stopped and PgBouncer pointed at the new one with RELOAD.
const runs = Boolean(process.env.DATABASE_URL) && canCreateClusters() && canRunPgbouncer();
const database = "vend_pooled_failover";
const appRole = "vend_app";
// By hand: POOLED_FAILOVER_LOGIN_RETRY=15 (PgBouncer's default) shows the failover waiting it out;
// POOLED_FAILOVER_SLOTS=10 (fewer server than client connections) shows the online restart stalling.
const loginRetrySeconds = Number(process.env.POOLED_FAILOVER_LOGIN_RETRY || 1);
const serverSlots = Number(process.env.POOLED_FAILOVER_SLOTS || 24);
const processes: StartedProcess[] = [];
const clusters: PrivateCluster[] = [];
let bouncer: SwitchablePgbouncer | undefined;
let handle: DbHandle | undefined;

afterAll(async () => {
  await Promise.all(processes.splice(0).map((p) => p.stop("SIGKILL")));
  // Each step on its own: a failed one must not leave a cluster or PgBouncer behind.
  await handle?.close().catch(() => undefined);
  await bouncer?.stop().catch(() => undefined);
  for (const cluster of clusters.splice(0)) await cluster.drop().catch(() => undefined);
});

/** One statement as postgres on its own connection (the servers go away under the drill). */
async function runAsOwner(url: string, statement: string): Promise<string> {
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const rows = await admin.unsafe(statement);
    return String(Object.values(rows[0] ?? {})[0] ?? "");
  } finally {
    await admin.end({ timeout: 2 });
  }
}

const elapsed = async (step: () => Promise<unknown>): Promise<number> => {
  const started = performance.now();
  await step();
  return Math.round(performance.now() - started);
};

const problems = (load: DrillLoadResult) => [...load.unexpected, ...load.unacknowledged, ...load.networkErrors];

describe.skipIf(!runs)("PgBouncer in front of a primary and its standby", () => {
  test("PAUSE/RESUME and an online restart under load answer no 503; promotion, the old primary stopped and PgBouncer repointed: a 2xx within 3 s, no acknowledged write lost, the books balance", async () => {
    const primary = await createPrivateCluster();
    clusters.push(primary);
    const primaryUrl = await primary.createDatabase(database);
    // Migrated by the owner, as an operator's `vend migrate` would; the service runs as a role owning nothing.
    const migrating = await openDatabase({ databaseUrl: primaryUrl, maxConnections: 1 });
    await runMigrations(migrating);
    await migrating.close();
    for (const statement of serviceRoleGrants(appRole)) await runAsOwner(primaryUrl, statement);
    // Set before the base backup, so the standby inherits it (postgresql.auto.conf), as one cloned from a
    // synchronous primary does: promoted, it would wait for a standby1 that is not there.
    await runAsOwner(primaryUrl, "alter system set synchronous_standby_names = 'standby1'");
    await runAsOwner(primaryUrl, "select pg_reload_conf()");
    const standby = await createStandby(primary, { applicationName: "standby1" });
    clusters.push(standby);
    const standbyUrl = standby.url(database);
    await waitUntil(
      async () => (await runAsOwner(primaryUrl, "select string_agg(sync_state, ',') from pg_stat_replication")) === "sync",
      { what: "the standby is synchronous" },
    );

    // 3 processes × 2 pools × 4 = 24 client connections on 24 server connections: nobody waits for a server,
    // which an online restart needs (SUSPEND cannot pause a client waiting while others are in a transaction).
    const pooler = await startSwitchablePgbouncer({
      database,
      host: "127.0.0.1",
      port: primary.port,
      users: [appRole],
      serverSlots,
      serverLoginRetrySeconds: loginRetrySeconds,
      serverConnectTimeoutSeconds: 2,
    });
    bouncer = pooler;
    const env = {
      DATABASE_POOLER: "transaction",
      DATABASE_DIRECT_URL: `postgres://${appRole}@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/${database}?target_session_attrs=primary`,
      DATABASE_POOL_SIZE: "4",
      DATABASE_CONNECT_TIMEOUT_SECONDS: "2",
      WORKER_POLL_MS: "200",
      WORKER_LEASE_SECONDS: "3",
      REQUERY_SCHEDULE: "1",
    };
    const pooledUrl = pooler.url(appRole);
    const first = spawnService(pooledUrl, "api", env);
    processes.push(first);
    const urls = [await apiUrl(first)];
    const [, key = ""] = await first.waitFor(/Test API key \(shown once, store it now\): (rg_test_\w+)/);
    const second = spawnService(pooledUrl, "api", env);
    const worker = spawnService(pooledUrl, "worker", { ...env, PUBLIC_BASE_URL: urls[0] ?? "" });
    processes.push(second, worker);
    urls.push(await apiUrl(second));
    await worker.waitFor(/Vend worker running/);
    await fundDefaultAccount(urls[0] ?? "", key, 50_000_000);
    const phones = ["08031234567", "08031232222", "08031231111"];

    // Maintenance under load, no retries: every request must be answered 2xx.
    let maintenanceDone = false;
    const maintenance = runDrillLoad({
      urls,
      key,
      vends: 0,
      until: () => maintenanceDone,
      concurrency: 8,
      fundEvery: 25,
      phones,
      keyPrefix: "maintenance",
    });
    await Bun.sleep(1000);
    const pauseMs = await elapsed(() => pooler.admin(`PAUSE ${database}`));
    await Bun.sleep(500);
    await pooler.admin(`RESUME ${database}`);
    await Bun.sleep(500);
    const restartMs = await elapsed(() => pooler.restartOnline());
    await Bun.sleep(1000);
    maintenanceDone = true;
    const quiet = await maintenance;
    console.log(
      `pooled failover drill: maintenance: PAUSE returned in ${pauseMs} ms (RESUME 500 ms later), online restart (-R) ${restartMs} ms; ${quiet.vends.length} vends and ${quiet.fundings.length} fundings, answers ${JSON.stringify(quiet.answers)}`,
    );
    expect(problems(quiet)).toEqual([]);
    expect(Object.keys(quiet.answers).sort()).toEqual(["200", "202"]);

    // The failover, under load retried on the same key after a 503 or a dropped connection.
    let failoverDone = false;
    const loading = runDrillLoad({
      urls,
      key,
      vends: 0,
      until: () => failoverDone,
      concurrency: 8,
      fundEvery: 25,
      retryForMs: 30_000,
      phones,
      keyPrefix: "failover",
    });
    await Bun.sleep(2000);
    const promoteMs = await elapsed(() => standby.promote());
    const promotedAt = Date.now();
    const inherited = await runAsOwner(standbyUrl, "show synchronous_standby_names");
    await runAsOwner(standbyUrl, "alter system set synchronous_standby_names = ''");
    await runAsOwner(standbyUrl, "select pg_reload_conf()");
    const clearedAt = Date.now();
    // Writes that reached the old primary since the promotion wait for a standby that left; stopping it ends them unacknowledged.
    await primary.stop();
    const stoppedAt = Date.now();
    await pooler.repoint("127.0.0.1", standby.port);
    const repointedAt = Date.now();
    await Bun.sleep(Math.max(4000, loginRetrySeconds * 1000 + 3000));
    failoverDone = true;
    const load = await loading;

    const answered = [...load.vends.map((v) => v.answeredAt)];
    const firstAfter = (since: number) => Math.min(...answered.filter((at) => at > since)) - promotedAt;
    console.log(
      `pooled failover drill: failover: promote ${promoteMs} ms; synchronous_standby_names '${inherited}' cleared +${clearedAt - promotedAt} ms, old primary stopped +${stoppedAt - promotedAt} ms, PgBouncer repointed +${repointedAt - promotedAt} ms; first 202 +${firstAfter(promotedAt)} ms after the promotion, first from the new primary (after the stop) +${firstAfter(stoppedAt)} ms; ${load.vends.length} vends and ${load.fundings.length} fundings acknowledged, answers ${JSON.stringify(load.answers)}`,
    );
    expect(inherited).toBe("standby1");
    expect(problems(load)).toEqual([]);
    expect(load.vends.filter((v) => v.answeredAt < promotedAt).length).toBeGreaterThan(10);
    expect(load.vends.filter((v) => v.answeredAt > repointedAt).length).toBeGreaterThan(10);
    // PgBouncer tries the new primary at most server_login_retry after its last failed attempt at the old one.
    expect(firstAfter(stoppedAt)).toBeLessThan(loginRetrySeconds * 1000 + 2000);
    // PgBouncer's server connections are all to the new primary.
    const servers = (await pooler.admin("SHOW SERVERS")).trim().split("\n").filter(Boolean);
    expect(servers.length).toBeGreaterThan(0);
    expect(servers.map((line) => line.split("|")[5])).toEqual(servers.map(() => String(standby.port)));

    // Every acknowledged vend and funding is on the new primary, once; no order without an acknowledgement.
    handle = await openDatabase({ databaseUrl: standbyUrl, maxConnections: 2 });
    const db = handle.db;
    const acknowledged = [...quiet.vends, ...load.vends];
    const orders = await queryRows<{ reference: string }>(db, sql`select reference from transactions`);
    expect(new Set(orders.map((o) => o.reference))).toEqual(new Set(acknowledged.map((v) => v.reference)));
    expect(orders.length).toBe(acknowledged.length);
    const fundings = [...quiet.fundings, ...load.fundings];
    expect(await fundingsInLedger(db, fundings)).toBe(fundings.length);
    const [allFundings] = await queryRows<{ n: number }>(
      db,
      sql`select count(*)::int as n from ledger_entries where kind = 'fund'`,
    );
    expect(allFundings?.n).toBe(fundings.length + 1);
    expect(await everyOrderFinal(handle, () => worker.output().slice(-3000))).toMatchObject({
      maxVendCount: 1,
      maxSettlementsPerTransaction: 1,
      heldKobo: 0,
    });
    expect(await reconcileWallets(db)).toEqual([]);
    // The service's role owns nothing on the new primary either.
    const owned = await runAsOwner(
      standbyUrl,
      `select count(*) from pg_class c join pg_roles r on r.oid = c.relowner where r.rolname = '${appRole}'`,
    );
    expect(owned).toBe("0");
  }, 150_000);
});
