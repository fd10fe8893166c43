/**
 * Sustained end to end (issue 11): can the worker keep up with a steady accept load on the same database?
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/sustained.ts
 *
 * An API process (src/main.ts serve) and worker processes (work), default settings,
 * LOG_LEVEL=error, on one database; 200 funded accounts. First a calibration burst finds the accept rate
 * (64 connections, closed loop, the workers paused; its backlog is then drained). Then, each round, an
 * open-loop load at 80% of that rate for BENCH_SECONDS while the workers process; the backlog is printed
 * every second, and after the load stops the bench times how long until every vend is final.
 * Target: drained within 2 s. It also prints the end-to-end ceiling the calibration implies (accepting and
 * processing on the same cores: 1 / (1/accept rate + 1/processing rate)); a load above it cannot drain in time.
 * Env: BENCH_SECONDS (15), BENCH_ROUNDS (1), BENCH_LOAD_FRACTION (0.8),
 * BENCH_CALIBRATION_SECONDS (3), BENCH_WORKER_PROCESSES (1), BENCH_ACCOUNTS (200), BENCH_RATE (unset: a fixed load in
 * accepts/s instead of the calibrated fraction, to compare two trees at the same rate).
 */
import type postgres from "postgres";
import { benchAdminToken, fundedAccounts, vendTargets } from "./lib/accounts.ts";
import { backlog } from "./lib/backlog.ts";
import { envNumber, requirePostgres, runBench, stopping } from "./lib/cleanup.ts";
import { benchClient, serviceDatabase } from "./lib/databases.ts";
import { closedLoop, type OpenLoopProgress, openLoop } from "./lib/load.ts";
import { apiUrl, startService } from "./lib/processes.ts";
import { printFigure } from "./lib/stats.ts";

const seconds = envNumber("BENCH_SECONDS", 15);
const rounds = envNumber("BENCH_ROUNDS", 1);
const fraction = envNumber("BENCH_LOAD_FRACTION", 0.8);
const calibrationSeconds = envNumber("BENCH_CALIBRATION_SECONDS", 3);
const processCount = envNumber("BENCH_WORKER_PROCESSES", 1);
const accountCount = envNumber("BENCH_ACCOUNTS", 200);
/** A fixed load (accepts/s) instead of the calibrated fraction, to compare two trees at the same rate. */
const fixedRate = process.env.BENCH_RATE ? envNumber("BENCH_RATE", 0) : undefined;
const targetDrainSeconds = 2;

/** Seconds from `since` (a performance.now()) until no vend is open. */
async function drainedAfter(sql: postgres.Sql, since: number): Promise<number> {
  for (;;) {
    if ((await backlog(sql)).open === 0) return (performance.now() - since) / 1000;
    if (stopping() || performance.now() - since > 600_000) throw new Error("backlog not drained after 10 minutes");
    await Bun.sleep(20);
  }
}

await runBench(async () => {
  const url = await serviceDatabase(requirePostgres());
  const api = startService(url, "api", { ADMIN_TOKEN: benchAdminToken });
  const workers = Array.from({ length: processCount }, () => startService(url, "worker"));
  const base = await apiUrl(api);
  await Promise.all(workers.map((w) => w.waitFor(/Vend worker running/)));
  const targets = vendTargets(base, await fundedAccounts(base, accountCount, 100_000_000_000));
  const sql = benchClient(url);

  for (const worker of workers) worker.pause();
  const calibration = await closedLoop(targets, 64, calibrationSeconds);
  const resumed = performance.now();
  for (const worker of workers) worker.resume();
  const calibrationDrain = await drainedAfter(sql, resumed);
  const rate = fixedRate ?? calibration.perSecond * fraction;
  console.log(
    `calibration: ${calibration.perSecond.toFixed(0)} accepts/s (64 connections, workers paused, ${calibration.failed} failed); ` +
      `its ${calibration.ok} vends drained in ${calibrationDrain.toFixed(2)} s`,
  );
  if (calibration.ok === 0 || calibration.failed > calibration.ok / 100)
    throw new Error(`the calibration burst failed (${calibration.failed} failed), e.g. ${calibration.failures.join(" | ")}`);
  // Accepting and processing share the machine's cores: with each alone at its full rate (the burst's accept
  // rate, its drain's processing rate), both at once keep up with at most 1 / (1/accepting + 1/processing).
  // A steady load above that ceiling grows the backlog for as long as it lasts, whatever the drain target.
  const processingRate = calibration.ok / calibrationDrain;
  const ceiling = 1 / (1 / calibration.perSecond + 1 / processingRate);
  console.log(
    `each alone: ${calibration.perSecond.toFixed(0)} accepts/s, ${processingRate.toFixed(0)} vends processed/s; ` +
      `both at once at most ~${ceiling.toFixed(0)}/s (${((ceiling / calibration.perSecond) * 100).toFixed(0)}% of the accept rate)`,
  );
  const share =
    fixedRate === undefined
      ? `${fraction * 100}%`
      : `fixed, ${((rate / calibration.perSecond) * 100).toFixed(0)}% of the calibrated rate`;
  console.log(`load: ${rate.toFixed(0)} accepts/s (${share}) for ${seconds} s, ${processCount} worker process(es)\n`);

  const drains: number[] = [];
  const achieved: number[] = [];
  const peaks: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const progress: OpenLoopProgress = { sent: 0, answered: 0, ok: 0, failed: 0, behind: 0 };
    const started = performance.now();
    const loadEnds = started + seconds * 1000;
    let peak = 0;
    let reporting = true;
    const reporter = (async () => {
      console.log("   t   sent  202s  failed  behind  queued  open (queued+processing+pending)");
      for (let tick = 1; reporting; tick++) {
        await Bun.sleep(Math.max(0, started + tick * 1000 - performance.now()));
        if (!reporting) break;
        const now = await backlog(sql);
        peak = Math.max(peak, now.open);
        console.log(
          `${String(tick).padStart(4)} ${String(progress.sent).padStart(6)} ${String(progress.ok).padStart(5)} ${String(progress.failed).padStart(7)} ` +
            `${String(progress.behind).padStart(7)} ${String(now.queued).padStart(7)} ${String(now.open).padStart(5)}`,
        );
      }
    })();
    const failures = await openLoop(targets, rate, seconds, progress);
    reporting = false;
    await reporter;
    const drain = await drainedAfter(sql, loadEnds);
    if (failures.length > 0) console.log(`failures, e.g.: ${failures.join(" | ")}`);
    console.log(
      `round ${round}: ${(progress.ok / seconds).toFixed(0)} accepts/s achieved, backlog peak ${peak}, ` +
        `drained ${drain.toFixed(2)} s after the load stopped\n`,
    );
    drains.push(drain);
    achieved.push(progress.ok / seconds);
    peaks.push(peak);
  }

  console.log(`${"".padEnd(40)} ${"min / median / max".padStart(22)}`);
  printFigure("accepts/s achieved", achieved, "/s");
  printFigure("backlog peak (open vends)", peaks, "vends");
  printFigure(
    "drain after the load stops",
    drains.map((d) => d * 1000),
    "ms",
  );
  const worst = Math.max(...drains);
  console.log(
    `\ndrain / target (${targetDrainSeconds} s): ${(worst / targetDrainSeconds).toFixed(2)} at worst (target ≤ 1.0: ${worst <= targetDrainSeconds ? "met" : "NOT met"})`,
  );
});
