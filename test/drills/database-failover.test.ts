import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { type DbHandle, openDatabase } from "../../src/db/client.ts";
import { queryRows } from "../../src/db/rows.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { apiUrl, fundDefaultAccount, spawnService } from "../helpers/cluster.ts";
import { everyOrderFinal, fundingsInLedger, runDrillLoad } from "../helpers/drill-load.ts";
import { canCreateClusters, createPrivateCluster, createStandby, type PrivateCluster } from "../helpers/private-cluster.ts";
import type { StartedProcess } from "../helpers/process.ts";
import { drillServiceRole, migrateAsDeployed, withUser } from "../helpers/service-role.ts";
import { waitUntil } from "../helpers/wait.ts";

// A primary with a synchronous standby, each a cluster of its own; the service reaches them through one
// multi-host URL. The primary is killed (SIGKILL) under load and the standby promoted.
const runs = Boolean(process.env.DATABASE_URL) && canCreateClusters();
const processes: StartedProcess[] = [];
const clusters: PrivateCluster[] = [];
let handle: DbHandle | undefined;

afterEach(async () => {
  await Promise.all(processes.splice(0).map((p) => p.stop("SIGKILL")));
  await handle?.close();
  handle = undefined;
  for (const cluster of clusters.splice(0)) await cluster.drop().catch(() => undefined);
});

async function run(statement: string, url: string): Promise<void> {
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(statement);
  } finally {
    await admin.end({ timeout: 2 });
  }
}

describe.skipIf(!runs)("failover to a synchronous standby", () => {
  test("SIGKILL of the primary under load, the standby promoted: the processes reconnect through the multi-host URL; no acknowledged vend or funding is lost, none is charged twice, no 500, a 202 within 10 s of the promotion", async () => {
    const primary = await createPrivateCluster();
    clusters.push(primary);
    const primaryUrl = await primary.createDatabase("vend_failover");
    const standby = await createStandby(primary, { applicationName: "standby1" });
    clusters.push(standby);
    // Synchronous from now on: a commit is acknowledged once the standby has it.
    await run("alter system set synchronous_standby_names = 'standby1'", primaryUrl);
    await run("select pg_reload_conf()", primaryUrl);
    await waitUntil(
      async () => {
        const admin = postgres(primaryUrl, { max: 1 });
        const rows = await admin`select sync_state from pg_stat_replication`;
        await admin.end();
        return rows[0]?.sync_state === "sync";
      },
      { what: "the standby is synchronous" },
    );

    // The service runs as a role that owns nothing; `vend migrate` migrates as the owner and grants it.
    const url = withUser(
      `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/vend_failover?target_session_attrs=primary`,
      drillServiceRole,
    );
    await migrateAsDeployed(primaryUrl, { DATABASE_URL: url });
    // Orders in flight at the kill are picked up again after a short lease and re-queried soon.
    const env = {
      DATABASE_POOL_SIZE: "6",
      DATABASE_CONNECT_TIMEOUT_SECONDS: "2",
      WORKER_POLL_MS: "200",
      WORKER_LEASE_SECONDS: "3",
      REQUERY_SCHEDULE: "1",
    };
    const first = spawnService(url, "api", env);
    processes.push(first);
    const urls = [await apiUrl(first)];
    const [, key = ""] = await first.waitFor(/Test API key \(shown once, store it now\): (rg_test_\w+)/);
    const second = spawnService(url, "api", env);
    const worker = spawnService(url, "worker", { ...env, PUBLIC_BASE_URL: urls[0] ?? "" });
    processes.push(second, worker);
    urls.push(await apiUrl(second));
    await worker.waitFor(/Vend worker running/);
    await fundDefaultAccount(urls[0] ?? "", key, 50_000_000);

    let stop = false;
    const loading = runDrillLoad({
      urls,
      key,
      vends: 0,
      until: () => stop,
      concurrency: 12,
      fundEvery: 25,
      retryForMs: 60_000,
      phones: ["08031234567", "08031232222", "08031231111"],
    });
    await Bun.sleep(3000);
    const postmaster = Number(readFileSync(`/var/lib/postgresql/15/${primary.name}/postmaster.pid`, "utf8").split("\n")[0]);
    process.kill(postmaster, "SIGKILL");
    const killedAt = Date.now();
    await Bun.sleep(1000);
    await standby.promote();
    const promotedAt = Date.now();
    await Bun.sleep(6000);
    stop = true;
    const load = await loading;

    const firstAfter = Math.min(...load.vends.filter((v) => v.answeredAt > promotedAt).map((v) => v.answeredAt)) - promotedAt;
    console.log(
      `failover drill: ${load.vends.length} vends and ${load.fundings.length} fundings acknowledged, answers ${JSON.stringify(load.answers)}, first 202 ${firstAfter} ms after the promotion`,
    );
    expect(load.unexpected).toEqual([]);
    expect(load.unacknowledged).toEqual([]);
    const before = load.vends.filter((v) => v.answeredAt < killedAt).length;
    const after = load.vends.filter((v) => v.answeredAt > promotedAt).map((v) => v.answeredAt);
    expect(before).toBeGreaterThan(20);
    expect(after.length).toBeGreaterThan(20);
    expect(Math.min(...after) - promotedAt).toBeLessThan(10_000);

    handle = await openDatabase({
      databaseUrl: `postgres://postgres@127.0.0.1:${standby.port}/vend_failover`,
      maxConnections: 2,
    });
    const db = handle.db;
    // Every acknowledged vend is on the new primary, once: one order per key, no order without an acknowledgement.
    const orders = await queryRows<{ reference: string }>(db, sql`select reference from transactions`);
    expect(new Set(orders.map((o) => o.reference))).toEqual(new Set(load.vends.map((v) => v.reference)));
    expect(orders.length).toBe(load.vends.length);
    expect(await fundingsInLedger(db, load.fundings)).toBe(load.fundings.length);
    const [allFundings] = await queryRows<{ n: number }>(
      db,
      sql`select count(*)::int as n from ledger_entries where kind = 'fund'`,
    );
    // The first funding (fundDefaultAccount) and one per acknowledged funding key: none applied twice.
    expect(allFundings?.n).toBe(load.fundings.length + 1);

    expect(await everyOrderFinal(handle, () => worker.output().slice(-3000))).toMatchObject({
      maxVendCount: 1,
      maxSettlementsPerTransaction: 1,
      heldKobo: 0,
    });
    expect(await reconcileWallets(db)).toEqual([]);
  }, 240_000);
});
