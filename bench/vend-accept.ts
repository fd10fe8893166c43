/**
 * Vend accept throughput, the service against its anchors in one run (issue 11). By hand:
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/vend-accept.ts
 *
 * Subject: the real service (src/main.ts serve, LOG_LEVEL=error) taking POST /api/v1/vend over HTTP from
 * 64 concurrent connections spread over 200 funded accounts, each with its own key, a new Idempotency-Key
 * per request. Anchors, on their own tables in the same database:
 *   bare    bench/anchors/bare-accept-server.ts, a bare Elysia server doing the 3-statement transaction
 *           over 1,000 wallets (same pool size, same load generator);
 *   driver  the same transaction from 64 concurrent callers through the `postgres` driver, no HTTP.
 * Then the hot-wallet variant: every connection on one account, against the bare server on one wallet.
 * Rounds interleave (the order flips every round); prints min / median / max and the per-round ratios.
 * Env: BENCH_SECONDS (per side per round, 3), BENCH_ROUNDS (5), BENCH_CONCURRENCY (64), BENCH_ACCOUNTS (200),
 * BENCH_POOL_SIZE (the service's DATABASE_POOL_SIZE and the anchors' pool, 10).
 */
import type postgres from "postgres";
import { bareAccept, bareWalletCount } from "./anchors/bare-accept-sql.ts";
import { benchAdminToken, fundedAccounts, vendBody, vendTargets } from "./lib/accounts.ts";
import { envNumber, requirePostgres, runBench } from "./lib/cleanup.ts";
import { benchClient, serviceDatabase } from "./lib/databases.ts";
import { closedLoop, type LoadResult, loops, type Target } from "./lib/load.ts";
import { apiUrl, startAnchor, startService } from "./lib/processes.ts";
import { printFigure, printRatio } from "./lib/stats.ts";

const seconds = envNumber("BENCH_SECONDS", 3);
const rounds = envNumber("BENCH_ROUNDS", 5);
const concurrency = envNumber("BENCH_CONCURRENCY", 64);
const accountCount = envNumber("BENCH_ACCOUNTS", 200);
const poolSize = envNumber("BENCH_POOL_SIZE", 10);

/** The driver-only baseline: `concurrency` callers each running the transaction back to back. */
function driverLoop(sql: postgres.Sql, wallets: number): Promise<LoadResult> {
  const deadline = performance.now() + seconds * 1000;
  return loops(
    concurrency,
    () => performance.now() < deadline,
    async (n) => ((await bareAccept(sql, 1 + (n % wallets), 10_000, "08031234567")) ? undefined : "not accepted"),
  );
}

await runBench(async () => {
  const url = await serviceDatabase(requirePostgres());
  const poolEnv = { DATABASE_POOL_SIZE: String(poolSize) };
  const api = startService(url, "api", { ADMIN_TOKEN: benchAdminToken, ...poolEnv });
  const bare = startAnchor("bare-accept-server.ts", { DATABASE_URL: url, ...poolEnv });
  const serviceUrl = await apiUrl(api);
  const [, bareUrl = ""] = await bare.waitFor(/listening on (http:\/\/\S+)/);

  const keys = await fundedAccounts(serviceUrl, accountCount, 100_000_000_000);
  const serviceSpread = vendTargets(serviceUrl, keys);
  const serviceHot = serviceSpread.slice(0, 1);
  const bareTarget = (wallet: number): Target => ({
    url: `${bareUrl}/api/v1/vend`,
    headers: { authorization: `Bearer ${wallet}`, "content-type": "application/json" },
    body: vendBody,
  });
  const bareSpread = Array.from({ length: bareWalletCount }, (_, i) => bareTarget(i + 1));
  const bareHot = [bareTarget(1)];
  const driver = benchClient(url, poolSize);

  const sides = [
    { label: `service, ${accountCount} accounts`, run: () => closedLoop(serviceSpread, concurrency, seconds) },
    { label: `bare Elysia, ${bareWalletCount} wallets`, run: () => closedLoop(bareSpread, concurrency, seconds) },
    { label: `driver only, ${bareWalletCount} wallets`, run: () => driverLoop(driver, bareWalletCount) },
    { label: "service, one hot account", run: () => closedLoop(serviceHot, concurrency, seconds) },
    { label: "bare Elysia, one hot wallet", run: () => closedLoop(bareHot, concurrency, seconds) },
  ];
  const results = sides.map(() => [] as number[]);

  console.log(`${concurrency} connections, pool ${poolSize}, ${seconds} s per side, ${rounds} rounds (+ 1 warm-up); accepts/s`);
  for (let round = 0; round <= rounds; round++) {
    const order = sides.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    const line: string[] = [];
    for (const i of order) {
      const side = sides[i];
      if (!side) continue;
      const result = await side.run();
      if (result.failed > 0) console.log(`  ${side.label}: ${result.failed} failed, e.g. ${result.failures.join(" | ")}`);
      if (round > 0) results[i]?.push(result.perSecond);
      line.push(`${side.label} ${result.perSecond.toFixed(0)}`);
    }
    console.log(`${round === 0 ? "warm-up" : `round ${round}`}: ${line.join(", ")}`);
  }

  console.log(`\n${"accepts/s".padEnd(40)} ${"min / median / max".padStart(22)}`);
  sides.forEach((side, i) => {
    printFigure(side.label, results[i] ?? [], "/s");
  });
  const [service, bareFigures, driverFigures, serviceHotFigures, bareHotFigures] = results;
  console.log("");
  printRatio("service / bare, spread", service ?? [], bareFigures ?? [], "≥ 1.0");
  printRatio("service / driver only", service ?? [], driverFigures ?? [], "none, for reference");
  printRatio("service / bare, hot wallet", serviceHotFigures ?? [], bareHotFigures ?? [], "≥ 2.0");
});
