import { afterEach, describe, expect, test } from "bun:test";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { apiUrl, finalCounter, fundDefaultAccount, spawnService, summarise, vendMany } from "../helpers/cluster.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import type { StartedProcess } from "../helpers/process.ts";
import { processTestMs } from "../helpers/process.ts";

// Several processes on one database need a real PostgreSQL server (CI always has one).
const postgres = Boolean(process.env.DATABASE_URL);
const processes: StartedProcess[] = [];
let database: TestDatabase | undefined;

afterEach(async () => {
  await Promise.all(processes.splice(0).map((p) => p.stop("SIGKILL")));
  await database?.drop();
  database = undefined;
});

async function cluster(apis: number) {
  database = await createTestDatabase({ maxConnections: 4 });
  const url = database.url ?? "";
  const first = spawnService(url, "api");
  processes.push(first);
  const urls = [await apiUrl(first)];
  const [, key] = await first.waitFor(/Test API key \(shown once, store it now\): (rg_test_\w+)/);
  for (let i = 1; i < apis; i++) {
    const api = spawnService(url, "api");
    processes.push(api);
    urls.push(await apiUrl(api));
  }
  return { url, urls, key: key ?? "", handle: database.handle };
}

function worker(url: string, env: Record<string, string>) {
  const started = spawnService(url, "worker", { WORKER_POLL_MS: "50", WORKER_LEASE_SECONDS: "2", ...env });
  processes.push(started);
  return started;
}

describe.skipIf(!postgres)("processes on one database", () => {
  test(
    "a worker killed with SIGKILL mid-batch: after a new worker starts, every transaction is final exactly once and none was vended twice",
    async () => {
      const { url, urls, key, handle } = await cluster(1);
      await fundDefaultAccount(urls[0] ?? "", key, 10_000_000);
      const references = await vendMany(urls, key, 300);
      const finals = await finalCounter(handle);
      const doomed = worker(url, { SANDBOX_LATENCY_MS: "40", WORKER_CONCURRENCY: "16" });
      await finals.reached(40);
      await doomed.stop("SIGKILL");
      const midway = await summarise(handle);
      expect(midway.final).toBeLessThan(300);
      worker(url, { WORKER_CONCURRENCY: "16" });
      await finals.reached(300);
      await finals.stop();
      const books = await summarise(handle);
      expect(books).toMatchObject({
        transactions: 300,
        final: 300,
        notFinal: 0,
        maxVendCount: 1,
        ordersAtProvider: 300,
        captures: 300,
        releases: 0,
        maxSettlementsPerTransaction: 1,
        events: 300,
        maxEventsPerTransaction: 1,
        heldKobo: 0,
      });
      expect(references).toHaveLength(300);
      expect(await reconcileWallets(handle.db)).toEqual([]);
    },
    processTestMs,
  );

  test(
    "SIGTERM: in-flight work finishes or its lease is given back; the next worker finishes the rest",
    async () => {
      const { url, urls, key, handle } = await cluster(1);
      await fundDefaultAccount(urls[0] ?? "", key, 10_000_000);
      await vendMany(urls, key, 60);
      const finals = await finalCounter(handle);
      const first = worker(url, { SANDBOX_LATENCY_MS: "150", WORKER_CONCURRENCY: "8", WORKER_LEASE_SECONDS: "300" });
      await finals.reached(8);
      const started = performance.now();
      expect(await first.stop("SIGTERM")).toBe(0);
      expect(performance.now() - started).toBeLessThan(5000);
      // With a 300 s lease, only leases given back on shutdown let the next worker finish promptly.
      worker(url, { WORKER_CONCURRENCY: "8" });
      await finals.reached(60, 30_000);
      await finals.stop();
      expect(await summarise(handle)).toMatchObject({ final: 60, maxVendCount: 1, maxSettlementsPerTransaction: 1, heldKobo: 0 });
    },
    processTestMs,
  );

  test("two API processes and two workers process 2,000 vends: none twice, no hold left behind", async () => {
    const { url, urls, key, handle } = await cluster(2);
    await fundDefaultAccount(urls[0] ?? "", key, 100_000_000);
    const finals = await finalCounter(handle);
    worker(url, { WORKER_CONCURRENCY: "16" });
    worker(url, { WORKER_CONCURRENCY: "16" });
    const references = await vendMany(urls, key, 2000, 64);
    expect(new Set(references).size).toBe(2000);
    await finals.reached(2000, 90_000);
    await finals.stop();
    expect(await summarise(handle)).toMatchObject({
      transactions: 2000,
      final: 2000,
      maxVendCount: 1,
      ordersAtProvider: 2000,
      captures: 2000,
      maxSettlementsPerTransaction: 1,
      events: 2000,
      maxEventsPerTransaction: 1,
      heldKobo: 0,
    });
    expect(await reconcileWallets(handle.db)).toEqual([]);
  }, 180_000);
});
