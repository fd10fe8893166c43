/**
 * What a vend costs the machine, and what an idle service costs (issue 27):
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/worker-cost.ts
 *
 * An API process (src/main.ts --no-worker) and one worker process (--worker-only), default settings,
 * LOG_LEVEL=error, 200 funded accounts; and the bare accept server (bench/anchors/bare-accept-server.ts) on
 * its own tables of the same database. CPU is read from /proc for each process and for the PostgreSQL
 * backends serving it (bench/lib/cpu.ts).
 *
 * - **At rest**: CPU ms per second of each process and of its backends over BENCH_IDLE_SECONDS with no
 *   traffic, measured before the load and again after it (an idle cost that grew with the work done would
 *   show). Target: worker + its backends ≤ 5 ms/s.
 * - **At a fixed rate**: each round, BENCH_RATE vends/s for BENCH_SECONDS to the service (then until the
 *   worker has finished them) and the same rate to the bare server, in alternating order. Per vend: the API
 *   and its backends (accepting), the worker and its backends (processing), the bare server and its
 *   backends (the anchor), and tuples read (`pg_stat_database.tup_returned` of the service's database, every
 *   statement of both processes) per vend. Targets: processing ≤ accepting; accepting ≤ 1.3× the anchor;
 *   tuples read ≤ 100 per vend and flat from round to round (the rounds add up to BENCH_ROUNDS × rate ×
 *   seconds vends processed).
 *
 * Env: BENCH_RATE (100), BENCH_SECONDS (20), BENCH_ROUNDS (5), BENCH_IDLE_SECONDS (10), BENCH_ACCOUNTS (200).
 * Say whether the server runs with autovacuum (printed at the start): production's case is autovacuum on.
 */
import { bareWalletCount } from "./anchors/bare-accept-sql.ts";
import { benchAdminToken, fundedAccounts, vendBody, vendTargets } from "./lib/accounts.ts";
import { backlog } from "./lib/backlog.ts";
import { envNumber, requirePostgres, runBench, stopping } from "./lib/cleanup.ts";
import { type CpuSample, cpuBetween, sampleCpu } from "./lib/cpu.ts";
import { benchClient, serviceDatabase } from "./lib/databases.ts";
import { type OpenLoopProgress, openLoop, type Target } from "./lib/load.ts";
import { apiUrl, type BenchProcess, startAnchor, startService } from "./lib/processes.ts";
import { formatSpread, spread } from "./lib/stats.ts";

const rate = envNumber("BENCH_RATE", 100);
const seconds = envNumber("BENCH_SECONDS", 20);
const rounds = envNumber("BENCH_ROUNDS", 5);
const idleSeconds = envNumber("BENCH_IDLE_SECONDS", 10);
const accountCount = envNumber("BENCH_ACCOUNTS", 200);

const line = (label: string, values: number[], unit: string, digits = 2) =>
  console.log(`${label.padEnd(46)} ${formatSpread(spread(values), digits).padStart(24)} ${unit}`);

await runBench(async () => {
  const base = requirePostgres();
  const serverPort = Number(new URL(base).port || 5432);
  const url = await serviceDatabase(base);
  const api = startService(url, "api", { ADMIN_TOKEN: benchAdminToken });
  const worker = startService(url, "worker");
  const bare = startAnchor("bare-accept-server.ts", { DATABASE_URL: url });
  const serviceUrl = await apiUrl(api);
  await worker.waitFor(/Vend worker running/);
  const [, bareUrl = ""] = await bare.waitFor(/listening on (http:\/\/\S+)/);
  const service = vendTargets(serviceUrl, await fundedAccounts(serviceUrl, accountCount, 100_000_000_000));
  const anchor: Target[] = Array.from({ length: bareWalletCount }, (_, i) => ({
    url: `${bareUrl}/api/v1/vend`,
    headers: { authorization: `Bearer ${i + 1}`, "content-type": "application/json" },
    body: vendBody,
  }));
  const sql = benchClient(url);
  const [settings] = await sql<{ autovacuum: string; version: string }[]>`
    select current_setting('autovacuum') as autovacuum, current_setting('server_version') as version`;
  console.log(
    `PostgreSQL ${settings?.version}, autovacuum = ${settings?.autovacuum}; ${rate} vends/s for ${seconds} s per side, ` +
      `${rounds} rounds; at rest ${idleSeconds} s before and after\n`,
  );

  const sample = (process: BenchProcess) => sampleCpu(sql, process.proc.pid, serverPort);
  const open = async () => (await backlog(sql)).open;
  const tuplesRead = async () => {
    const [row] = await sql<{ n: string }[]>`select tup_returned as n from pg_stat_database where datname = current_database()`;
    return Number(row?.n ?? 0);
  };
  /** Statistics reach pg_stat_database up to a second after a statement; wait for them to settle. */
  const settle = () => Bun.sleep(1500);

  async function atRest(label: string) {
    await Bun.sleep(3000);
    const before = await Promise.all([sample(api), sample(worker)]);
    await Bun.sleep(idleSeconds * 1000);
    const after = await Promise.all([sample(api), sample(worker)]);
    const [apiCpu, workerCpu] = [
      cpuBetween(before[0] as CpuSample, after[0] as CpuSample),
      cpuBetween(before[1] as CpuSample, after[1] as CpuSample),
    ];
    const perSecond = (ms: number) => (ms / idleSeconds).toFixed(1);
    console.log(
      `at rest, ${label}: worker ${perSecond(workerCpu.process)} + its backends ${perSecond(workerCpu.backends)} ms/s; ` +
        `API ${perSecond(apiCpu.process)} + its backends ${perSecond(apiCpu.backends)} ms/s`,
    );
    return workerCpu.process + workerCpu.backends;
  }

  const idleBefore = await atRest("before the load");
  const figures = { accept: [] as number[], process: [] as number[], bare: [] as number[], tuples: [] as number[] };
  const parts = {
    api: [] as number[],
    apiBackends: [] as number[],
    worker: [] as number[],
    workerBackends: [] as number[],
    bare: [] as number[],
    bareBackends: [] as number[],
  };
  for (let round = 0; round <= rounds && !stopping(); round++) {
    const sides = [
      async () => {
        await settle();
        const tuples0 = await tuplesRead();
        const before = await Promise.all([sample(api), sample(worker)]);
        const progress: OpenLoopProgress = { sent: 0, answered: 0, ok: 0, failed: 0, behind: 0 };
        await openLoop(service, rate, seconds, progress);
        while ((await open()) > 0 && !stopping()) await Bun.sleep(20);
        const after = await Promise.all([sample(api), sample(worker)]);
        await settle();
        const tuples = (await tuplesRead()) - tuples0;
        const a = cpuBetween(before[0] as CpuSample, after[0] as CpuSample);
        const w = cpuBetween(before[1] as CpuSample, after[1] as CpuSample);
        const vends = Math.max(progress.ok, 1);
        if (round > 0) {
          figures.accept.push((a.process + a.backends) / vends);
          figures.process.push((w.process + w.backends) / vends);
          figures.tuples.push(tuples / vends);
          parts.api.push(a.process / vends);
          parts.apiBackends.push(a.backends / vends);
          parts.worker.push(w.process / vends);
          parts.workerBackends.push(w.backends / vends);
        }
        return `service: ${progress.ok} vends, accept ${((a.process + a.backends) / vends).toFixed(2)} ms, process ${((w.process + w.backends) / vends).toFixed(2)} ms, ${(tuples / vends).toFixed(0)} tuples read per vend`;
      },
      async () => {
        const before = await sample(bare);
        const progress: OpenLoopProgress = { sent: 0, answered: 0, ok: 0, failed: 0, behind: 0 };
        await openLoop(anchor, rate, seconds, progress);
        const b = cpuBetween(before, await sample(bare));
        const accepts = Math.max(progress.ok, 1);
        if (round > 0) {
          figures.bare.push((b.process + b.backends) / accepts);
          parts.bare.push(b.process / accepts);
          parts.bareBackends.push(b.backends / accepts);
        }
        return `bare: ${progress.ok} accepts, ${((b.process + b.backends) / accepts).toFixed(2)} ms`;
      },
    ];
    if (round % 2 === 1) sides.reverse();
    const said: string[] = [];
    for (const side of sides) said.push(await side());
    console.log(`${round === 0 ? "warm-up" : `round ${round}`}: ${said.join("; ")}`);
  }
  const idleAfter = await atRest(`after ${rounds + 1} rounds`);

  console.log(`\n${"per vend".padEnd(46)} ${"min / median / max".padStart(24)}`);
  line("accept: API + its backends", figures.accept, "ms CPU");
  line("  API process", parts.api, "ms CPU");
  line("  its backends", parts.apiBackends, "ms CPU");
  line("process: worker + its backends", figures.process, "ms CPU");
  line("  worker process", parts.worker, "ms CPU");
  line("  its backends", parts.workerBackends, "ms CPU");
  line("anchor: bare server + its backends", figures.bare, "ms CPU");
  line("  bare server process", parts.bare, "ms CPU");
  line("  its backends", parts.bareBackends, "ms CPU");
  line("tuples read (tup_returned) per vend", figures.tuples, "tuples", 0);
  const ratio = (a: number[], b: number[]) => a.map((x, i) => x / (b[i] ?? Number.NaN));
  console.log("");
  line("ratio processing / accepting (target ≤ 1.0)", ratio(figures.process, figures.accept), "");
  line("ratio accepting / bare anchor (target ≤ 1.3)", ratio(figures.accept, figures.bare), "");
  console.log(`tuples read per vend by round (flat is the target): ${figures.tuples.map((t) => t.toFixed(0)).join(", ")}`);
  const [hot] = await sql<{ relname: string; updates: string; hot: string }[]>`
    select sum(n_tup_upd) as updates, sum(n_tup_hot_upd) as hot from pg_stat_user_tables
    where relname = 'transactions' or relname like 'transactions\\_y%'`;
  console.log(`transactions: ${hot?.hot} of ${hot?.updates} row updates were HOT (wrote no index entry)`);
  const readers = await sql<{ name: string; scans: string; tuples: string }[]>`
    select relname || ' (seq scan)' as name, seq_scan as scans, seq_tup_read as tuples from pg_stat_user_tables where seq_tup_read > 0
    union all
    select indexrelname, idx_scan, idx_tup_read from pg_stat_user_indexes where idx_tup_read > 0
    order by tuples desc limit 6`;
  console.log(`where the tuples were read: ${readers.map((r) => `${r.name} ${r.tuples} in ${r.scans} scans`).join("; ")}`);
  console.log(
    `worker + its backends at rest: ${(idleBefore / idleSeconds).toFixed(1)} ms/s before, ${(idleAfter / idleSeconds).toFixed(1)} ms/s after (target ≤ 5)`,
  );
});
