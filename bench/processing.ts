/**
 * Processing throughput, the service against graphile-worker in one run (issue 11). By hand:
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/processing.ts
 *
 * Subject: vends fully processed per second (claim, sandbox provider answering success at once, completion
 * with capture, ledger entry and event) by real worker processes (src/main.ts work, default
 * settings, LOG_LEVEL=error). Anchor: graphile-worker (bench/anchors/graphile-noop-worker.ts, default
 * settings) running no-op jobs on its own database, as many processes, the same number of items.
 * Each round, for each side: its workers are paused (SIGSTOP), the items are queued (vends accepted over
 * HTTP by the API process; jobs added with addJobs), then the clock starts as the workers are resumed
 * (SIGCONT) and stops when the last item is done (polled every 10 ms on both sides). The side going first
 * alternates. Env: BENCH_VENDS (items per side per round, 2000), BENCH_ROUNDS (5),
 * BENCH_WORKER_PROCESSES (2), BENCH_WORKER_CONCURRENCY (unset: the service's default WORKER_CONCURRENCY).
 */

import { makeWorkerUtils, runMigrations } from "graphile-worker";
import type postgres from "postgres";
import { fundTestWallet, vendTargets } from "./lib/accounts.ts";
import { backlog } from "./lib/backlog.ts";
import { envNumber, requirePostgres, runBench, stopping } from "./lib/cleanup.ts";
import { benchClient, blankDatabase, serviceDatabase } from "./lib/databases.ts";
import { closedLoopCount } from "./lib/load.ts";
import { apiUrl, type BenchProcess, startAnchor, startService } from "./lib/processes.ts";
import { printFigure, printRatio } from "./lib/stats.ts";

const items = envNumber("BENCH_VENDS", 2000);
const rounds = envNumber("BENCH_ROUNDS", 5);
const processCount = envNumber("BENCH_WORKER_PROCESSES", 2);
const workerConcurrency = process.env.BENCH_WORKER_CONCURRENCY;

/** Resumes `workers`, then waits until `remaining()` is 0; items per second. */
async function timeUntilDone(workers: BenchProcess[], remaining: () => Promise<number>): Promise<number> {
  const started = performance.now();
  for (const worker of workers) worker.resume();
  const deadline = started + 600_000;
  while ((await remaining()) > 0) {
    if (performance.now() > deadline || stopping()) throw new Error("items not done after 10 minutes");
    await Bun.sleep(10);
  }
  return items / ((performance.now() - started) / 1000);
}

async function count(sql: postgres.Sql, query: string): Promise<number> {
  const [row] = await sql.unsafe(query);
  return Number(row?.n ?? -1);
}

await runBench(async () => {
  const base = requirePostgres();
  const serviceUrl = await serviceDatabase(base);
  const graphileUrl = await blankDatabase(base, "graphile");

  const api = startService(serviceUrl, "api");
  const apiBase = await apiUrl(api);
  const [, key = ""] = await api.waitFor(/Test API key \(shown once, store it now\): (rg_test_\w+)/);
  await fundTestWallet(apiBase, key, 100_000_000_000);
  const targets = vendTargets(apiBase, [key]);
  const serviceSql = benchClient(serviceUrl);
  const workerEnv: Record<string, string> = workerConcurrency ? { WORKER_CONCURRENCY: workerConcurrency } : {};
  const serviceWorkers = Array.from({ length: processCount }, () => startService(serviceUrl, "worker", workerEnv));

  await runMigrations({ connectionString: graphileUrl });
  const utils = await makeWorkerUtils({ connectionString: graphileUrl });
  const graphileSql = benchClient(graphileUrl);
  const graphileWorkers = Array.from({ length: processCount }, () =>
    startAnchor("graphile-noop-worker.ts", { DATABASE_URL: graphileUrl }),
  );
  await Promise.all(serviceWorkers.map((w) => w.waitFor(/Vend worker running/)));
  await Promise.all(graphileWorkers.map((w) => w.waitFor(/graphile worker running/)));

  const sides = [
    {
      label: `service: ${processCount} worker process(es), vends`,
      async run() {
        for (const worker of serviceWorkers) worker.pause();
        const accepted = await closedLoopCount(targets, 64, items);
        if (accepted.failed > 0) throw new Error(`accepts failed: ${accepted.failures.join(" | ")}`);
        return timeUntilDone(serviceWorkers, async () => (await backlog(serviceSql)).open);
      },
    },
    {
      label: `graphile-worker: ${processCount} process(es), no-op jobs`,
      async run() {
        for (const worker of graphileWorkers) worker.pause();
        await utils.addJobs(Array.from({ length: items }, () => ({ identifier: "noop", payload: {} })));
        return timeUntilDone(graphileWorkers, () =>
          count(graphileSql, "select count(*) as n from graphile_worker._private_jobs"),
        );
      },
    },
  ];
  const results = sides.map(() => [] as number[]);
  console.log(`${items} items per side per round, ${rounds} rounds (+ 1 warm-up); items done per second`);
  try {
    for (let round = 0; round <= rounds; round++) {
      const order = round % 2 === 1 ? [1, 0] : [0, 1];
      const line: string[] = [];
      for (const i of order) {
        const side = sides[i];
        if (!side) continue;
        const perSecond = await side.run();
        if (round > 0) results[i]?.push(perSecond);
        line.push(`${side.label} ${perSecond.toFixed(0)}`);
      }
      console.log(`${round === 0 ? "warm-up" : `round ${round}`}: ${line.join(", ")}`);
    }
  } finally {
    await utils.release();
  }
  const failed = await count(serviceSql, "select count(*) as n from transactions where status <> 'successful'");
  if (failed !== 0) console.log(`warning: ${failed} vends did not end successful`);

  console.log(`\n${"items/s".padEnd(46)} ${"min / median / max".padStart(22)}`);
  sides.forEach((side, i) => {
    printFigure(side.label, results[i] ?? [], "/s", 46);
  });
  console.log("");
  printRatio("service / graphile-worker", results[0] ?? [], results[1] ?? [], "≥ 1.0");
});
