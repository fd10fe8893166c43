import { afterAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { type DbHandle, openDatabase } from "../../src/db/client.ts";
import type { Executor } from "../../src/db/executor.ts";
import { runMigrations } from "../../src/db/migrate.ts";
import { queryRows } from "../../src/db/rows.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { apiUrl, fundDefaultAccount, spawnService } from "../helpers/cluster.ts";
import {
  type AcknowledgedVend,
  type DrillLoadResult,
  everyOrderFinal,
  fundingsInLedger,
  runDrillLoad,
} from "../helpers/drill-load.ts";
import { canCreateClusters, createPrivateCluster, type PrivateCluster, run } from "../helpers/private-cluster.ts";
import { childEnv, processTestMs, type StartedProcess, spawnProcess } from "../helpers/process.ts";
import { serviceRoleGrants } from "../helpers/service-role.ts";
import { waitUntil } from "../helpers/wait.ts";

// pgBackRest archives a cluster of its own while the service runs on it; a full backup, then a point-in-time
// restore into a new cluster at a moment T between two acknowledged loads. The restored books must hold exactly
// what was acknowledged before T, and the service must start on them.
const clusters = Boolean(process.env.DATABASE_URL) && canCreateClusters();
const pgbackrestInstalled = Boolean(Bun.which("pgbackrest"));
if (clusters && !pgbackrestInstalled)
  console.warn("backup-restore drill SKIPPED: pgbackrest is not installed (Debian: apt-get install pgbackrest)");

const main = join(import.meta.dir, "../../src/main.ts");
const database = "vend_backup";
/** The service's role: it owns no table, schema or database (checked below), so it cannot drop or alter them. */
const appRole = "vend_app";
const initialFundingKobo = 50_000_000;
const processes: StartedProcess[] = [];
const created: PrivateCluster[] = [];
const closers: (() => Promise<unknown>)[] = [];
let scratch: string | undefined;

afterAll(async () => {
  await Promise.all(processes.splice(0).map((p) => p.stop("SIGKILL")));
  for (const close of closers.splice(0)) await close().catch(() => undefined);
  for (const cluster of created.splice(0)) await cluster.drop().catch(() => undefined);
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const seconds = (since: number) => Math.round((performance.now() - since) / 100) / 10;

/** Runs a command as the postgres user (as archive_command does, so the repository's files are all its own). */
async function asPostgres(cmd: string[]): Promise<string> {
  const proc = Bun.spawn(["runuser", "-u", "postgres", "--", ...cmd], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}:\n${out}${err}`);
  return out;
}

/** The service's role, as `vend migrate` grants it: DML only, no ownership, no DDL. */
const appGrants = serviceRoleGrants(appRole);

const appUrl = (cluster: PrivateCluster) => `postgres://${appRole}@127.0.0.1:${cluster.port}/${database}`;

/** API and worker from this tree as the service's role; returns the API's URL and, on a new database, the test key it printed. */
async function startService(cluster: PrivateCluster, printsKey: boolean): Promise<{ url: string; key: string }> {
  const env = { WORKER_POLL_MS: "50", WORKER_LEASE_SECONDS: "3", REQUERY_SCHEDULE: "1", DATABASE_POOL_SIZE: "6" };
  const api = spawnService(appUrl(cluster), "api", env);
  processes.push(api);
  const url = await apiUrl(api);
  const key = printsKey ? ((await api.waitFor(/Test API key \(shown once, store it now\): (rg_test_\w+)/))[1] ?? "") : "";
  const worker = spawnService(appUrl(cluster), "worker", { ...env, PUBLIC_BASE_URL: url });
  processes.push(worker);
  await worker.waitFor(/Vend worker running/);
  return { url, key };
}

async function stopService(): Promise<void> {
  for (const p of processes.splice(0)) expect(await p.stop("SIGTERM")).toBe(0);
}

/** Vends (a third to a destination the sandbox declines, so holds are both captured and released) and fundings. */
const load = (url: string, key: string, keyPrefix: string, requests: number) =>
  runDrillLoad({
    urls: [url],
    key,
    vends: requests,
    concurrency: 6,
    fundEvery: 6,
    fundKobo: 250_000,
    phones: ["08031234567", "08031237777", "08031231111"],
    keyPrefix,
  });

function combine(results: DrillLoadResult[]) {
  return {
    vends: results.flatMap((r) => r.vends),
    fundings: results.flatMap((r) => r.fundings),
    unexpected: results.flatMap((r) => [...r.unexpected, ...r.unacknowledged, ...r.networkErrors]),
  };
}

/** How many times each key has an idempotency record (its primary key holds scope, method, path and key). */
async function idempotencyCounts(db: Executor, keys: string[]): Promise<number[]> {
  const rows = await queryRows<{ n: number }>(
    db,
    sql`select count(i.key)::int as n from unnest(${`{${keys.join(",")}}`}::text[]) as k(key)
        left join idempotency_records i on i.key = k.key group by k.key`,
  );
  return rows.map((r) => r.n);
}

/** How many orders each reference has. */
async function orderCounts(db: Executor, references: string[]): Promise<number[]> {
  const rows = await queryRows<{ n: number }>(
    db,
    sql`select count(t.reference)::int as n from unnest(${`{${references.join(",")}}`}::text[]) as r(reference)
        left join transactions t on t.reference = r.reference group by r.reference`,
  );
  return rows.map((r) => r.n);
}

/**
 * Where the money is. Money enters only by a funding (or an operator credit) and leaves only by a successful
 * order's capture, so with every wallet equal to its ledger: the wallets hold what was funded less what was
 * sold, and exactly the prices of unfinished orders are held.
 */
async function moneyAccounted(db: Executor) {
  const [row] = await queryRows<Record<string, string>>(
    db,
    sql`select (select coalesce(sum(balance_kobo), 0) from wallets) as balance,
               (select coalesce(sum(held_kobo), 0) from wallets) as held,
               (select coalesce(sum(amount_kobo), 0) from ledger_entries where kind in ('fund', 'credit')) as paid_in,
               (select coalesce(sum(price_kobo), 0) from transactions where status = 'successful') as sold,
               (select coalesce(sum(price_kobo), 0) from transactions where status not in ('successful', 'failed')) as open`,
  );
  const n = (k: string) => Number(row?.[k]);
  return { paidIn: n("paid_in"), balanceLessSold: n("balance") + n("sold"), held: n("held"), open: n("open") };
}

/** Tables, sequences, schemas, functions and databases `role` owns. */
async function ownedBy(db: Executor, role: string): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`select ((select count(*) from pg_class where relowner = r.oid) + (select count(*) from pg_namespace where nspowner = r.oid)
              + (select count(*) from pg_proc where proowner = r.oid) + (select count(*) from pg_database where datdba = r.oid))::int as n
        from pg_roles r where r.rolname = ${role}`,
  );
  return row?.n ?? -1;
}

describe.skipIf(!clusters || !pgbackrestInstalled)("backups that restore: pgBackRest, point in time, a new cluster", () => {
  test(
    "every vend and funding acknowledged before T restored exactly once, none after T; the books reconcile; migrations current; the service serves on the restored cluster",
    async () => {
      const started = performance.now();
      scratch = await mkdtemp(join(tmpdir(), "vend-backup-"));
      const stanza = "vend_drill";
      const config = join(scratch, "pgbackrest.conf");
      const pgbackrest = (...args: string[]) => asPostgres(["pgbackrest", `--config=${config}`, `--stanza=${stanza}`, ...args]);

      const primary = await createPrivateCluster({
        start: false,
        settings: {
          archive_mode: "on",
          archive_command: `pgbackrest --config=${config} --stanza=${stanza} archive-push %p`,
        },
      });
      created.push(primary);
      await writeFile(
        config,
        [
          "[global]",
          `repo1-path=${scratch}/repo`,
          "repo1-retention-full=2",
          `lock-path=${scratch}/lock`,
          `log-path=${scratch}/log`,
          `spool-path=${scratch}/spool`,
          "log-level-console=warn",
          "start-fast=y",
          "compress-type=lz4",
          "archive-timeout=30",
          "",
          `[${stanza}]`,
          `pg1-path=/var/lib/postgresql/15/${primary.name}`,
          `pg1-port=${primary.port}`,
          "pg1-socket-path=/var/run/postgresql",
          "",
        ].join("\n"),
      );
      await run(["chown", "-R", "postgres:postgres", scratch]);
      await primary.start();
      await pgbackrest("stanza-create");
      await pgbackrest("check");

      // Migrated by the owner (postgres), as an operator's `vend migrate` would; the service runs as vend_app.
      const primaryUrl = await primary.createDatabase(database);
      const admin = postgres(primaryUrl, { max: 1, onnotice: () => {} });
      closers.push(() => admin.end({ timeout: 2 }));
      const migrating = await openDatabase({ databaseUrl: primaryUrl, maxConnections: 1 });
      await runMigrations(migrating);
      await migrating.close();
      for (const statement of appGrants) await admin.unsafe(statement);
      const setUp = seconds(started);

      const service = await startService(primary, true);
      await fundDefaultAccount(service.url, service.key, initialFundingKobo);
      const beforeBackup = await load(service.url, service.key, "before-backup", 90);

      const backupStarted = performance.now();
      await pgbackrest("backup", "--type=full");
      const backupSeconds = seconds(backupStarted);
      const [info] = JSON.parse(await pgbackrest("info", "--output=json")) as {
        backup: { info: { size: number; repository: { size: number } }; timestamp: { stop: number } }[];
      }[];
      const megabytes = (bytes = 0) => Math.round(bytes / 100_000) / 10;
      const backupSize = {
        clusterMB: megabytes(info?.backup[0]?.info.size),
        repositoryMB: megabytes(info?.backup[0]?.info.repository.size),
      };

      const afterBackup = await load(service.url, service.key, "after-backup", 90);
      // A point-in-time restore needs a backup that stopped before T, and pgBackRest keeps the stop time in whole
      // seconds: on a fast run the load after the backup took under a second and T fell in the stop's second.
      const backupStop = (info?.backup[0]?.timestamp.stop ?? 0) * 1000;
      await Bun.sleep(Math.max(0, backupStop + 2000 - Date.now()));
      // No request is in flight here: every write acknowledged so far committed before T, and every request
      // of the next load is sent after T was read (and a pause), so it commits after T.
      const [target] = await admin<{ t: string }[]>`select now()::text as t`;
      const targetTime = target?.t ?? "";
      await Bun.sleep(300);
      const afterTarget = await load(service.url, service.key, "after-target", 60);
      await admin`select pg_switch_wal()`;
      await pgbackrest("check");
      await stopService();

      const before = combine([beforeBackup, afterBackup]);
      const after = combine([afterTarget]);
      expect([...before.unexpected, ...after.unexpected]).toEqual([]);
      expect(Math.max(...before.vends.map((v) => v.answeredAt))).toBeLessThanOrEqual(Date.parse(targetTime));
      expect(Math.min(...after.vends.map((v) => v.answeredAt))).toBeGreaterThan(Date.parse(targetTime));
      expect(before.vends.length).toBeGreaterThan(100);
      expect(after.vends.length).toBeGreaterThan(30);

      // The restore: a new cluster, its data directory emptied and filled by pgBackRest from the repository,
      // then recovery replays the archived WAL up to T and promotes.
      const restored = await createPrivateCluster({ start: false });
      created.push(restored);
      const restoredDir = `/var/lib/postgresql/15/${restored.name}`;
      await run(["find", restoredDir, "-mindepth", "1", "-delete"]);
      const restoreStarted = performance.now();
      await pgbackrest(
        "restore",
        "--type=time",
        `--target=${targetTime}`,
        "--target-action=promote",
        `--pg1-path=${restoredDir}`,
      );
      const restoreSeconds = seconds(restoreStarted);
      const recoveryStarted = performance.now();
      await restored.start();
      const restoredAdmin = postgres(restored.url("postgres"), { max: 1, onnotice: () => {} });
      closers.push(() => restoredAdmin.end({ timeout: 2 }));
      await waitUntil(async () => !(await restoredAdmin`select pg_is_in_recovery() as r`)[0]?.r, {
        what: "the restored cluster promoted",
        timeoutMs: 60_000,
        intervalMs: 100,
      });
      const recoverySeconds = seconds(recoveryStarted);

      const handle: DbHandle = await openDatabase({ databaseUrl: restored.url(database), maxConnections: 2 });
      closers.push(() => handle.close());
      const db = handle.db;
      // Before anything runs on it: what was acknowledged before T is there once; nothing acknowledged after.
      const references = (vends: AcknowledgedVend[]) => vends.map((v) => v.reference);
      const keys = (requests: { key: string }[]) => requests.map((r) => r.key);
      expect(new Set(await orderCounts(db, references(before.vends)))).toEqual(new Set([1]));
      expect(new Set(await idempotencyCounts(db, keys([...before.vends, ...before.fundings])))).toEqual(new Set([1]));
      expect(await fundingsInLedger(db, before.fundings)).toBe(before.fundings.length);
      expect(new Set(await orderCounts(db, references(after.vends)))).toEqual(new Set([0]));
      expect(new Set(await idempotencyCounts(db, keys([...after.vends, ...after.fundings])))).toEqual(new Set([0]));
      expect(await fundingsInLedger(db, after.fundings)).toBe(0);
      const [totals] = await queryRows<{ orders: number; fundings: number; unfinished: number }>(
        db,
        sql`select (select count(*)::int from transactions) as orders,
                   (select count(*)::int from ledger_entries where kind = 'fund') as fundings,
                   (select count(*)::int from transactions where status not in ('successful', 'failed')) as unfinished`,
      );
      // No order or funding that nobody was told of: the first funding is fundDefaultAccount's.
      expect(totals).toMatchObject({ orders: before.vends.length, fundings: before.fundings.length + 1 });

      // Money neither created nor lost: what was paid in is exactly the acknowledged fundings; every wallet equals
      // its ledger; the wallets hold what was paid in less what was sold; only unfinished orders are held.
      const paidBeforeT = initialFundingKobo + before.fundings.reduce((sum, f) => sum + f.amountKobo, 0);
      const restoredMoney = await moneyAccounted(db);
      expect(restoredMoney).toMatchObject({ paidIn: paidBeforeT, balanceLessSold: paidBeforeT });
      expect(restoredMoney.held).toBe(restoredMoney.open);
      expect(await reconcileWallets(db)).toEqual([]);

      // The migrations recorded in the restored database are this tree's.
      const check = spawnProcess([process.execPath, main, "migrate", "--check"], childEnv({ DATABASE_URL: appUrl(restored) }));
      expect({ code: await check.finished(), output: check.output() }).toMatchObject({ code: 0 });

      // The service starts on it as its role, is ready, finishes what T left unfinished and sells again.
      const again = await startService(restored, false);
      await waitUntil(async () => (await fetch(`${again.url}/readyz`).catch(() => undefined))?.status === 200, {
        what: "/readyz 200 on the restored cluster",
        timeoutMs: 20_000,
        intervalMs: 100,
      });
      const vend = await fetch(`${again.url}/api/v1/vend?wait=10`, {
        method: "POST",
        headers: { authorization: `Bearer ${service.key}`, "content-type": "application/json", "idempotency-key": "restored-1" },
        body: JSON.stringify({ product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 }),
      });
      const sold = (await vend.json()) as { data: { reference: string; status: string } };
      expect({ status: vend.status, order: sold.data.status }).toEqual({ status: 202, order: "successful" });
      const books = await everyOrderFinal(handle, () => processes.map((p) => p.output().slice(-2000)).join("\n"));
      expect(books).toMatchObject({ transactions: before.vends.length + 1, maxVendCount: 1, maxSettlementsPerTransaction: 1 });
      expect(await reconcileWallets(db)).toEqual([]);
      expect(await moneyAccounted(db)).toMatchObject({ paidIn: paidBeforeT, balanceLessSold: paidBeforeT, held: 0, open: 0 });
      await stopService();
      expect(await ownedBy(db, appRole)).toBe(0);

      const summary = {
        vends: { beforeBackup: beforeBackup.vends.length, afterBackup: afterBackup.vends.length, afterT: after.vends.length },
        fundings: { beforeT: before.fundings.length, afterT: after.fundings.length },
        restored: { ...totals, paidInKobo: restoredMoney.paidIn, heldKobo: restoredMoney.held },
        fullBackup: backupSize,
        target: targetTime,
      };
      console.log(`backup-restore drill: ${JSON.stringify(summary)}`);
      console.log(
        `backup-restore drill: set-up ${setUp} s, full backup ${backupSeconds} s, restore ${restoreSeconds} s, recovery to T and promotion ${recoverySeconds} s, whole drill ${seconds(started)} s`,
      );
    },
    processTestMs,
  );
});
