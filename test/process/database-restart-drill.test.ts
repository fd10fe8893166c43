import { afterAll, describe, expect, test } from "bun:test";
import { openDatabase } from "../../src/db/client.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { apiUrl, fundDefaultAccount, spawnService } from "../helpers/cluster.ts";
import { acceptedInBooks } from "../helpers/drill-load.ts";
import { canCreateClusters, createPrivateCluster, type PrivateCluster } from "../helpers/private-cluster.ts";
import type { StartedProcess } from "../helpers/process.ts";
import { processTestMs } from "../helpers/process.ts";

// The database server itself goes away (`pg_ctlcluster stop -m fast`) under load and comes back. That needs a
// cluster of its own: the PostgreSQL server other tests share is never stopped.
const postgres = Boolean(process.env.DATABASE_URL) && canCreateClusters();
const processes: StartedProcess[] = [];
let cluster: PrivateCluster | undefined;

afterAll(async () => {
  await Promise.all(processes.splice(0).map((p) => p.stop("SIGKILL")));
  await cluster?.drop();
});

interface Tally {
  statuses: Map<number, number>;
  /** 503 answers without a Retry-After header. */
  unavailableWithoutRetryAfter: number;
  /** Bodies of 500 answers (there must be none). */
  internalErrors: string[];
  /** Requests the service did not answer at all (a process died or closed the socket). */
  unanswered: string[];
  /** References of accepted vends: each must be in the books afterwards. */
  accepted: string[];
  /** Time of the last 2xx answer. */
  lastSuccessAt: number;
}

const vendBody = JSON.stringify({ product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 });

/** `clients` loops of vends over `urls` until `signal` aborts, each request with its own idempotency key. */
function loopVends(urls: string[], key: string, clients: number, signal: AbortSignal): { tally: Tally; done: Promise<void> } {
  const tally: Tally = {
    statuses: new Map(),
    unavailableWithoutRetryAfter: 0,
    internalErrors: [],
    unanswered: [],
    accepted: [],
    lastSuccessAt: 0,
  };
  let sent = 0;
  const client = async (n: number) => {
    while (!signal.aborted) {
      const i = sent++;
      try {
        const res = await fetch(`${urls[(n + i) % urls.length]}/api/v1/vend`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": `restart-${i}` },
          body: vendBody,
        });
        const text = await res.text();
        tally.statuses.set(res.status, (tally.statuses.get(res.status) ?? 0) + 1);
        if (res.status === 500) tally.internalErrors.push(text);
        if (res.status === 503 && !res.headers.get("retry-after")) tally.unavailableWithoutRetryAfter++;
        if (res.status === 202) tally.accepted.push((JSON.parse(text) as { data: { reference: string } }).data.reference);
        if (res.status < 300) tally.lastSuccessAt = performance.now();
        // A refused request is answered at once; pace the loop so the outage is not a busy spin.
        if (res.status >= 500) await Bun.sleep(20);
      } catch (error) {
        tally.unanswered.push(String(error));
        await Bun.sleep(20);
      }
    }
  };
  return { tally, done: Promise.all(Array.from({ length: clients }, (_, n) => client(n))).then(() => undefined) };
}

describe.skipIf(!postgres)("the PostgreSQL server stops and starts under load", () => {
  test(
    "2 API and 2 worker processes, 16 vend clients: no 500, every 503 has Retry-After, service recovers, books balance",
    async () => {
      cluster = await createPrivateCluster();
      const databaseUrl = await cluster.createDatabase("vend_drill");
      const env = { WORKER_POLL_MS: "50" };
      const first = spawnService(databaseUrl, "api", env);
      processes.push(first);
      const urls = [await apiUrl(first)];
      const [, key = ""] = await first.waitFor(/Test API key \(shown once, store it now\): (rg_test_\w+)/);
      const others = [spawnService(databaseUrl, "api", env), spawnService(databaseUrl, "worker", env)];
      others.push(spawnService(databaseUrl, "worker", env));
      processes.push(...others);
      urls.push(await apiUrl(others[0] as StartedProcess));
      await Promise.all(others.slice(1).map((worker) => worker.waitFor(/worker/i)));
      await fundDefaultAccount(urls[0] ?? "", key, 500_000_000);

      const stopClients = new AbortController();
      const { tally, done } = loopVends(urls, key, 16, stopClients.signal);
      await Bun.sleep(3000);
      const acceptedBeforeOutage = tally.accepted.length;
      await cluster.stop();
      await Bun.sleep(8000);
      await cluster.start();
      const restarted = performance.now();
      while (tally.lastSuccessAt < restarted && performance.now() - restarted < 20_000) await Bun.sleep(100);
      const recoveredAfterMs = tally.lastSuccessAt - restarted;
      await Bun.sleep(3000);
      stopClients.abort();
      await done;

      const summary = Object.fromEntries(tally.statuses);
      expect(tally.internalErrors.slice(0, 3)).toEqual([]);
      expect(summary[500]).toBeUndefined();
      expect(Object.keys(summary).sort()).toEqual(["202", "503"]);
      expect(tally.unavailableWithoutRetryAfter).toBe(0);
      expect(tally.unanswered.slice(0, 3)).toEqual([]);
      expect(acceptedBeforeOutage).toBeGreaterThan(0);
      // The service came back by itself, and kept serving after it did.
      expect(recoveredAfterMs).toBeGreaterThanOrEqual(0);
      expect(recoveredAfterMs).toBeLessThan(20_000);
      for (const p of processes) expect(p.proc.exitCode).toBeNull();

      // Books: every accepted vend is recorded with exactly one hold, and every wallet agrees with its ledger.
      const handle = await openDatabase({ databaseUrl, maxConnections: 2 });
      try {
        const counts = await acceptedInBooks(handle.db, tally.accepted);
        expect(counts?.missing).toBe(0);
        expect(counts?.holds).toBe(counts?.transactions ?? -1);
        expect(counts?.transactions ?? 0).toBeGreaterThanOrEqual(tally.accepted.length);
        expect(await reconcileWallets(handle.db)).toEqual([]);
      } finally {
        await handle.close();
      }
    },
    processTestMs,
  );
});
