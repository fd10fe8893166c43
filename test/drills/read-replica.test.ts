import { afterAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDatabase } from "../../src/db/client.ts";
import { queryRows } from "../../src/db/rows.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { apiUrl, fundDefaultAccount, spawnService } from "../helpers/cluster.ts";
import { acceptedInBooks } from "../helpers/drill-load.ts";
import { canCreateClusters, createPrivateCluster, createStandby, type PrivateCluster } from "../helpers/private-cluster.ts";
import { processTestMs, type StartedProcess } from "../helpers/process.ts";
import { parsePrometheusText, total } from "../helpers/prometheus.ts";
import { drillServiceRole, migrateAsDeployed, withUser } from "../helpers/service-role.ts";
import { waitUntil } from "../helpers/wait.ts";

// A primary and a streaming standby of its own (pg_basebackup -R); the standby is stopped and started under load.
const postgres = Boolean(process.env.DATABASE_URL) && canCreateClusters();
const processes: StartedProcess[] = [];
const clusters: PrivateCluster[] = [];
const adminToken = "drill-admin-token-0123456789abcdef";

afterAll(async () => {
  await Promise.all(processes.splice(0).map((p) => p.stop("SIGKILL")));
  await Promise.all(clusters.splice(0).map((cluster) => cluster.drop().catch(() => undefined)));
});

/** Operator and catalogue reads, all routed to the replica while it keeps up. */
const routedReads = [
  ["admin", "/admin/v1/transactions?limit=20"],
  ["admin", "/admin/v1/reconciliation"],
  ["admin", "/admin/v1/audit"],
  ["admin", "/admin/v1/callbacks"],
  ["admin", "/admin/v1/anomalies"],
  ["admin", "/admin/v1/accounts"],
  ["admin", "/admin/v1/providers/sandbox/stats"],
  ["client", "/api/v1/catalogue/products"],
  ["client", "/api/v1/pricing"],
] as const;

interface Tally {
  statuses: Map<string, number>;
  /** Answers that were not 2xx, or requests not answered at all: there must be none. */
  failures: string[];
  accepted: string[];
  /** Vends whose reference was missing from the client's own list read right after its 202. */
  missingFromOwnList: string[];
}

function count(tally: Tally, kind: string, status: number | string) {
  const key = `${kind} ${status}`;
  tally.statuses.set(key, (tally.statuses.get(key) ?? 0) + 1);
}

/** Vend clients (each reads its list right after its 202) and operator readers, until `signal` aborts. */
function runLoad(url: string, key: string, signal: AbortSignal) {
  const tally: Tally = { statuses: new Map(), failures: [], accepted: [], missingFromOwnList: [] };
  const client = { authorization: `Bearer ${key}` };
  const admin = { authorization: `Bearer ${adminToken}` };
  let sent = 0;
  const request = async (kind: string, path: string, init: RequestInit = {}) => {
    try {
      const res = await fetch(`${url}${path}`, init);
      const text = await res.text();
      count(tally, kind, res.status);
      if (res.status >= 300) tally.failures.push(`${kind} ${path}: ${res.status} ${text.slice(0, 200)}`);
      return { status: res.status, text };
    } catch (error) {
      count(tally, kind, "unanswered");
      tally.failures.push(`${kind} ${path}: ${String(error)}`);
      return { status: 0, text: "" };
    }
  };
  const vendClient = async () => {
    while (!signal.aborted) {
      const i = sent++;
      const vend = await request("vend", "/api/v1/vend", {
        method: "POST",
        headers: { ...client, "content-type": "application/json", "idempotency-key": `replica-${i}` },
        body: JSON.stringify({ product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 }),
      });
      if (vend.status !== 202) continue;
      const reference = (JSON.parse(vend.text) as { data: { reference: string } }).data.reference;
      tally.accepted.push(reference);
      const list = await request("own-list", "/api/v1/transactions?limit=50", { headers: client });
      const items = list.status === 200 ? (JSON.parse(list.text) as { data: { items: { reference: string }[] } }).data.items : [];
      if (!items.some((item) => item.reference === reference)) tally.missingFromOwnList.push(reference);
    }
  };
  const operator = async (n: number) => {
    for (let i = n; !signal.aborted; i++) {
      const [who, path] = routedReads[i % routedReads.length] ?? routedReads[0];
      const stats = path.includes("stats");
      await request(stats ? "stats" : who === "admin" ? "operator-read" : "catalogue", path, {
        headers: who === "admin" ? admin : client,
      });
    }
  };
  const done = Promise.all([...Array.from({ length: 6 }, vendClient), ...Array.from({ length: 3 }, (_, n) => operator(n))]);
  return { tally, done: done.then(() => undefined) };
}

async function readMetrics(url: string) {
  const families = parsePrometheusText(await (await fetch(`${url}/metrics`)).text());
  return {
    replicaReads: total(families, "vend_db_reads_total", { target: "replica" }),
    primaryReads: total(families, "vend_db_reads_total", { target: "primary" }),
    lagSeconds: total(families, "vend_db_replica_lag_seconds"),
  };
}

describe.skipIf(!postgres)("a read replica under load, stopped and started", () => {
  test(
    "operator reads on the replica, a client's list after its 202 always has the order, a stopped replica fails nothing",
    async () => {
      const started = performance.now();
      const phases: Record<string, number> = {};
      const phase = (name: string) => {
        phases[name] = Math.round((performance.now() - started) / 100) / 10;
      };
      const primary = await createPrivateCluster();
      clusters.push(primary);
      const ownerUrl = await primary.createDatabase("vend_drill");
      // The service runs as a role that owns nothing: `vend migrate` migrates as the owner and grants it, while
      // the standby is copied from the primary (the copy streams the WAL too).
      const databaseUrl = withUser(ownerUrl, drillServiceRole);
      const env = { WORKER_POLL_MS: "50", ADMIN_TOKEN: adminToken, METRICS_ENABLED: "true" };
      const [standby] = await Promise.all([createStandby(primary), migrateAsDeployed(ownerUrl, { DATABASE_URL: databaseUrl })]);
      clusters.push(standby);
      phase("clusters");
      const worker = spawnService(databaseUrl, "worker", env);
      processes.push(worker);
      await worker.waitFor(/worker running/i);
      const api = spawnService(databaseUrl, "api", {
        ...env,
        DATABASE_READ_URL: withUser(standby.url("vend_drill"), drillServiceRole),
      });
      processes.push(api);
      const url = await apiUrl(api);
      const [, key = ""] = await api.waitFor(/Test API key \(shown once, store it now\): (rg_test_\w+)/);
      await fundDefaultAccount(url, key, 500_000_000);
      phase("processes");

      const stopLoad = new AbortController();
      const { tally, done } = runLoad(url, key, stopLoad.signal);
      try {
        // While the replica keeps up, operator reads go to it; the lag stays under the 1 s bound.
        const lags: number[] = [];
        await waitUntil(
          async () => {
            const m = await readMetrics(url);
            lags.push(m.lagSeconds);
            return m.replicaReads >= 50 && tally.accepted.length >= 50;
          },
          { what: "50 reads on the replica and 50 vends", timeoutMs: 30_000, intervalMs: 200 },
        );
        phase("replica reads");
        const beforeStop = await readMetrics(url);
        expect(beforeStop.lagSeconds).toBeLessThan(1);

        // The replica goes away: reads fall back to the primary, nothing fails.
        await standby.stop();
        const stoppedAt = await readMetrics(url);
        await waitUntil(async () => (await readMetrics(url)).primaryReads >= stoppedAt.primaryReads + 50, {
          what: "50 reads on the primary with the replica stopped",
          timeoutMs: 20_000,
          intervalMs: 200,
        });
        phase("stopped");
        const whileStopped = await readMetrics(url);
        expect(whileStopped.lagSeconds).toBe(Number.POSITIVE_INFINITY);
        const replicaReadsWhileStopped = whileStopped.replicaReads - stoppedAt.replicaReads;

        // Back again: reads return to it once a sample succeeds.
        await standby.start();
        const restarted = performance.now();
        await waitUntil(async () => (await readMetrics(url)).replicaReads >= whileStopped.replicaReads + 20, {
          what: "reads back on the restarted replica",
          timeoutMs: 20_000,
          intervalMs: 100,
        });
        const backAfterMs = Math.round(performance.now() - restarted);
        stopLoad.abort();
        await done;
        phase("back");

        // An idle primary: the replica has replayed all there is, so it stays current, although its last
        // replayed transaction grows old (now() - pg_last_xact_replay_timestamp() alone would exceed the bound).
        const replicaHandle = await openDatabase({ databaseUrl: standby.url("vend_drill"), maxConnections: 1 });
        let sinceLastReplayMs = 0;
        try {
          sinceLastReplayMs = await waitUntil(
            async () => {
              const [row] = await queryRows<{ ms: number }>(
                replicaHandle.db,
                sql`select (extract(epoch from now() - pg_last_xact_replay_timestamp()) * 1000)::float8 as ms`,
              );
              return Number(row?.ms) > 1500 && Number(row?.ms);
            },
            { what: "the primary idle for 1.5 s", timeoutMs: 15_000, intervalMs: 100 },
          );
        } finally {
          await replicaHandle.close();
        }
        const idle = await readMetrics(url);
        const idleRead = await fetch(`${url}/admin/v1/audit`, { headers: { authorization: `Bearer ${adminToken}` } });
        expect(idleRead.status).toBe(200);
        expect(idle.lagSeconds).toBeLessThan(0.5);
        expect((await readMetrics(url)).replicaReads).toBe(idle.replicaReads + 1);
        phase("idle");

        const summary = Object.fromEntries(tally.statuses);
        console.log(
          JSON.stringify({
            summary,
            accepted: tally.accepted.length,
            maxLagMsUnderLoad: Math.round(Math.max(...lags.filter(Number.isFinite)) * 1000),
            replicaReadsWhileStopped,
            backAfterMs,
            idleLagMs: Math.round(idle.lagSeconds * 1000),
            sinceLastReplayMs: Math.round(sinceLastReplayMs),
            phases,
          }),
        );
        expect(tally.failures.slice(0, 5)).toEqual([]);
        expect(tally.missingFromOwnList).toEqual([]);
        expect(tally.accepted.length).toBeGreaterThanOrEqual(100);
        // Reads in flight when it stopped may have tried it; after that, none until it is back.
        expect(replicaReadsWhileStopped).toBe(0);
        for (const p of processes) expect(p.proc.exitCode).toBeNull();
      } finally {
        stopLoad.abort();
        await done;
      }

      // The books: every accepted vend recorded with its one hold, every wallet equal to its ledger.
      const handle = await openDatabase({ databaseUrl, maxConnections: 1 });
      try {
        const counts = await acceptedInBooks(handle.db, tally.accepted);
        expect(counts).toEqual({ transactions: tally.accepted.length, holds: tally.accepted.length, missing: 0 });
        expect(await reconcileWallets(handle.db)).toEqual([]);
      } finally {
        await handle.close();
      }
    },
    processTestMs,
  );
});
