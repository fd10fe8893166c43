/**
 * The embedded database against PostgreSQL, `npm start` on each, in one run (issue 27). By hand:
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/embedded.ts
 *
 * Both sides are `src/main.ts` with no role flag (API and worker in one process, as `npm start` runs it),
 * the embedded one on a new data directory, the PostgreSQL one on a new empty database; each migrates
 * what it opens, as a first start does. Figures, each side in the same run:
 *   first start   spawn to "listening on" on the fresh directory / database (LOG_LEVEL=info, its progress
 *                 lines counted), then the warm start of the process the load runs on (LOG_LEVEL=error);
 *   batch 202     one POST /api/v1/vend/batches of BENCH_BATCH orders on the first-start process: the
 *                 client's wait for the 202 against the handler's own time (its access line's duration_ms),
 *                 and how long until every order of it was final;
 *   accepts/s     64 connections, closed loop, POST /api/v1/vend over BENCH_ACCOUNTS funded accounts,
 *                 interleaved rounds (the side going first flips each round), the backlog drained between;
 *   RSS idle      VmRSS of the service after its start and accounts, and again after the load, idle.
 * Prints min / median / max over the rounds and the per-round ratio embedded / PostgreSQL.
 * Env: BENCH_SECONDS (per side per round, 5), BENCH_ROUNDS (3, plus a warm-up), BENCH_CONCURRENCY (64),
 * BENCH_ACCOUNTS (50), BENCH_BATCH (1000, 0 skips it), BENCH_SERVICE_ROOT (the tree whose src/main.ts runs:
 * bisecting an older commit; only the accepts/s and the starts are asked of it when BENCH_BATCH=0).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { childEnv, type StartedProcess, spawnProcess } from "../test/helpers/process.ts";
import { benchAdminToken, fundedAccounts, fundTestWallet, vendTargets } from "./lib/accounts.ts";
import { envNumber, onCleanup, requirePostgres, runBench } from "./lib/cleanup.ts";
import { blankDatabase } from "./lib/databases.ts";
import { closedLoop } from "./lib/load.ts";
import { serviceRoot } from "./lib/processes.ts";
import { printFigure, printRatio } from "./lib/stats.ts";

const seconds = envNumber("BENCH_SECONDS", 5);
const rounds = envNumber("BENCH_ROUNDS", 3);
const concurrency = envNumber("BENCH_CONCURRENCY", 64);
const accountCount = envNumber("BENCH_ACCOUNTS", 50);
const batchSize = process.env.BENCH_BATCH === "0" ? 0 : envNumber("BENCH_BATCH", 1000);

interface Side {
  label: string;
  /** DATABASE_URL or VEND_DATA_DIR: where this side's service keeps its data. */
  env: Record<string, string>;
  process?: StartedProcess;
  url: string;
}

/** `npm start` (src/main.ts, no role flag) of the tree under test; stopped at cleanup. */
function npmStart(side: Side, logLevel: string): StartedProcess {
  const started = spawnProcess(
    [process.execPath, join(serviceRoot, "src/main.ts")],
    childEnv({
      PORT: "0",
      LOG_LEVEL: logLevel,
      ADMIN_TOKEN: benchAdminToken,
      // The limiter's machinery runs as by default, without refusing the bench's load.
      RATE_LIMIT_PER_MINUTE: "1000000",
      METRICS_ENABLED: "true",
      ...side.env,
    }),
  );
  onCleanup(`stop ${side.label}`, async () => {
    const killer = setTimeout(() => started.proc.kill("SIGKILL"), 10_000);
    await started.stop("SIGTERM");
    clearTimeout(killer);
  });
  return started;
}

/** Starts `side` and waits for it to listen; returns the seconds that took. */
async function start(side: Side, logLevel: string): Promise<number> {
  const began = performance.now();
  side.process = npmStart(side, logLevel);
  const [, url = ""] = await side.process.waitFor(/listening on (http:\/\/\S+)/, 300_000);
  side.url = url;
  return (performance.now() - began) / 1000;
}

async function stop(side: Side): Promise<void> {
  await side.process?.stop("SIGTERM");
}

function rssMb(side: Side): number {
  const status = readFileSync(`/proc/${side.process?.proc.pid}/status`, "utf8");
  const [, kb = "0"] = status.match(/VmRSS:\s+(\d+)/) ?? [];
  return Number(kb) / 1024;
}

/** Waits (at most 120 s) until no vend is due: the queue depth of /metrics, where the tree has it. */
async function drained(side: Side): Promise<void> {
  const deadline = performance.now() + 120_000;
  while (performance.now() < deadline) {
    const text = await fetch(`${side.url}/metrics`)
      .then((r) => (r.ok ? r.text() : ""))
      .catch(() => "");
    const [, depth] = text.match(/^vend_queue_depth (\d+)/m) ?? [];
    if (depth === undefined || depth === "0") return;
    await Bun.sleep(250);
  }
  console.log(`  ${side.label}: backlog not drained after 120 s`);
}

/** The 1,000-order batch on the first-start process: client wait, handler time, time until all final. */
async function timeBatch(side: Side): Promise<{ answered: number; handler: number; final: number }> {
  const key = side.process?.output().match(/Test API key \(shown once, store it now\): (\S+)/)?.[1];
  if (!key) throw new Error(`${side.label}: no test key printed at first start`);
  await fundTestWallet(side.url, key, 100_000 * batchSize);
  const orders = Array.from({ length: batchSize }, () => ({
    service: "airtime",
    product_code: "mtn-airtime",
    phone_number: "08031234567",
    amount_kobo: 10_000,
  }));
  const began = performance.now();
  const res = await fetch(`${side.url}/api/v1/vend/batches`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      "idempotency-key": `bench-batch-${side.label}`,
    },
    body: JSON.stringify({ orders }),
  });
  const body = (await res.json()) as { data: { id: string } };
  const answered = (performance.now() - began) / 1000;
  if (res.status !== 202) throw new Error(`${side.label}: batch answered ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  for (;;) {
    const poll = await fetch(`${side.url}/api/v1/vend/batches/${body.data.id}?limit=1`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const detail = (await poll.json()) as { data: { batch: { completed_at: string | null } } };
    if (detail.data.batch.completed_at) break;
    if (performance.now() - began > 600_000) throw new Error(`${side.label}: batch not final after 600 s`);
    await Bun.sleep(100);
  }
  const final = (performance.now() - began) / 1000;
  // The access line may sit in the logger's buffer for a moment.
  const line = await side.process?.waitFor(/"method":"POST","route":"[^"]*batches"[^\n]*"duration_ms":([\d.]+)/, 10_000);
  return { answered, handler: Number(line?.[1]) / 1000, final };
}

await runBench(async () => {
  const dataRoot = mkdtempSync(join(tmpdir(), "vend-bench-embedded-"));
  onCleanup("remove the embedded data directory", async () => rmSync(dataRoot, { recursive: true, force: true }));
  const pgUrl = await blankDatabase(requirePostgres(), "embedded");
  const sides: Side[] = [
    { label: "embedded", env: { VEND_DATA_DIR: join(dataRoot, "data") }, url: "" },
    { label: "postgres", env: { DATABASE_URL: pgUrl }, url: "" },
  ];
  console.log(`service tree ${serviceRoot}`);

  for (const side of sides) {
    const firstStart = await start(side, "info");
    const progressLines = (side.process?.output() ?? "")
      .split("\n")
      .filter((l) => /^(Opening|Loading|Migrating|Creating)/.test(l));
    console.log(
      `${side.label}: first start ${firstStart.toFixed(1)} s, ${progressLines.length} progress lines, RSS ${rssMb(side).toFixed(0)} MB`,
    );
    if (batchSize > 0) {
      const batch = await timeBatch(side);
      console.log(
        `${side.label}: batch of ${batchSize}: 202 after ${batch.answered.toFixed(2)} s, handler ${batch.handler.toFixed(2)} s ` +
          `(answer / handler ${(batch.answered / batch.handler).toFixed(1)}), all final after ${batch.final.toFixed(1)} s`,
      );
    }
    await stop(side);
    const warmStart = await start(side, "error");
    await Bun.sleep(2000);
    console.log(`${side.label}: warm start ${warmStart.toFixed(1)} s, RSS idle ${rssMb(side).toFixed(0)} MB`);
  }

  const targets = await Promise.all(
    sides.map(async (side) => vendTargets(side.url, await fundedAccounts(side.url, accountCount, 100_000_000_000))),
  );
  const rssBefore: number[] = [];
  for (const side of sides) {
    await Bun.sleep(1000);
    rssBefore.push(rssMb(side));
  }

  const results = sides.map(() => [] as number[]);
  console.log(
    `\n${concurrency} connections, ${accountCount} accounts, ${seconds} s per side, ${rounds} rounds (+ 1 warm-up); accepts/s`,
  );
  for (let round = 0; round <= rounds; round++) {
    const order = round % 2 === 1 ? [1, 0] : [0, 1];
    const line: string[] = [];
    for (const i of order) {
      const side = sides[i] as Side;
      const result = await closedLoop(targets[i] ?? [], concurrency, seconds);
      if (result.failed > 0) console.log(`  ${side.label}: ${result.failed} failed, e.g. ${result.failures.join(" | ")}`);
      await drained(side);
      if (round > 0) results[i]?.push(result.perSecond);
      line.push(`${side.label} ${result.perSecond.toFixed(0)}`);
    }
    console.log(`${round === 0 ? "warm-up" : `round ${round}`}: ${line.join(", ")}`);
  }
  // Idle means a while after the load: the embedded engine collects its garbage once quiet (up to ~10 s).
  await Bun.sleep(12_000);
  const rssAfter = sides.map((side) => rssMb(side));

  console.log(`\n${"accepts/s (npm start)".padEnd(40)} ${"min / median / max".padStart(22)}`);
  sides.forEach((side, i) => {
    printFigure(side.label, results[i] ?? [], "/s");
  });
  printRatio("embedded / postgres accepts/s", results[0] ?? [], results[1] ?? [], "≥ 0.25");
  sides.forEach((side, i) => {
    console.log(
      `RSS idle ${side.label}: ${rssBefore[i]?.toFixed(0)} MB after start, ${rssAfter[i]?.toFixed(0)} MB after the load`,
    );
  });
  console.log("targets: RSS idle embedded ≤ 250 MB; first start ≤ 10 s; batch 202 when its handler is done");
});
