/**
 * What a vend costs the machine, and what an idle service costs (issue 27):
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/worker-cost.ts
 *
 * An API process (src/main.ts serve) and one worker process (work), default settings,
 * LOG_LEVEL=error, 200 funded accounts; and the bare accept server (bench/anchors/bare-accept-server.ts) on
 * its own tables of the same database. CPU is read from /proc for each process and for the PostgreSQL
 * backends serving it (bench/lib/cpu.ts).
 *
 * - **At rest**: CPU ms per second of each process and of its backends over BENCH_IDLE_SECONDS with no
 *   traffic, BENCH_IDLE_SETTLE_SECONDS after the last request, measured before the load and again after it (an
 *   idle cost that grew with the work done would show). Target: worker + its backends ≤ 5 ms/s.
 * - **At a fixed rate**: each round, BENCH_RATE vends/s for BENCH_SECONDS to the service (then until the
 *   worker has finished them) and the same rate to the bare server, in alternating order. Per vend: the API
 *   and its backends (accepting), the worker and its backends (processing), the bare server and its
 *   backends (the anchor), and tuples read (`pg_stat_database.tup_returned` of the service's database, every
 *   statement of both processes) per vend. Targets: processing ≤ accepting; accepting ≤ 1.3× the anchor;
 *   tuples read ≤ 100 per vend and flat from round to round (the rounds add up to BENCH_ROUNDS × rate ×
 *   seconds vends processed).
 *
 * With BENCH_BEFORE_ROOT (a checkout of an older commit, with its own `npm ci`) that tree's API and worker run
 * too, on a blank database of their own that they migrate, as a third side of every round: before and after
 * measured in one run, at the same moments. Every side's processes stay up through the whole run, so the others'
 * rest cost (a few ms/s, printed) is in each side's figures alike.
 *
 * Env: BENCH_RATE (100), BENCH_SECONDS (20), BENCH_ROUNDS (5), BENCH_IDLE_SECONDS (30), BENCH_IDLE_SETTLE_SECONDS
 * (10), BENCH_ACCOUNTS (200),
 * BENCH_BEFORE_ROOT (unset). Say whether the server runs with autovacuum (printed at the start): production's
 * case is autovacuum on.
 */
import type postgres from "postgres";
import { bareWalletCount } from "./anchors/bare-accept-sql.ts";
import { benchAdminToken, fundedAccounts, vendBody, vendTargets } from "./lib/accounts.ts";
import { backlog } from "./lib/backlog.ts";
import { envNumber, requirePostgres, runBench, stopping } from "./lib/cleanup.ts";
import { cpuBetween, sampleCpu } from "./lib/cpu.ts";
import { benchClient, blankDatabase, serviceDatabase } from "./lib/databases.ts";
import { type OpenLoopProgress, openLoop, type Target } from "./lib/load.ts";
import { apiUrl, type BenchProcess, serviceRoot, startAnchor, startService, thisTree } from "./lib/processes.ts";
import { formatSpread, spread } from "./lib/stats.ts";

const rate = envNumber("BENCH_RATE", 100);
const seconds = envNumber("BENCH_SECONDS", 20);
const rounds = envNumber("BENCH_ROUNDS", 5);
const idleSeconds = envNumber("BENCH_IDLE_SECONDS", 30);
const idleSettleSeconds = envNumber("BENCH_IDLE_SETTLE_SECONDS", 10);
const accountCount = envNumber("BENCH_ACCOUNTS", 200);
const beforeRoot = process.env.BENCH_BEFORE_ROOT || undefined;

const line = (label: string, values: number[], unit: string, digits = 2) =>
  console.log(`${label.padEnd(46)} ${formatSpread(spread(values), digits).padStart(24)} ${unit}`);

/** One tree's service under measurement: its API and worker on a database of its own, and its figures. */
interface Tree {
  label: string;
  api: BenchProcess;
  worker: BenchProcess;
  sql: postgres.Sql;
  targets: Target[];
  idle: number[];
  figures: { accept: number[]; process: number[]; tuples: number[] };
  parts: { api: number[]; apiBackends: number[]; worker: number[]; workerBackends: number[] };
}

/** `root`'s API and worker on `url`; the API first, so a blank database is migrated once before the worker opens it. */
async function startTree(label: string, url: string, root: string): Promise<Tree> {
  const api = startService(url, "api", { ADMIN_TOKEN: benchAdminToken }, root);
  const serviceUrl = await apiUrl(api);
  const worker = startService(url, "worker", {}, root);
  await worker.waitFor(/Vend worker running/);
  return {
    label,
    api,
    worker,
    sql: benchClient(url),
    targets: vendTargets(serviceUrl, await fundedAccounts(serviceUrl, accountCount, 100_000_000_000)),
    idle: [],
    figures: { accept: [], process: [], tuples: [] },
    parts: { api: [], apiBackends: [], worker: [], workerBackends: [] },
  };
}

await runBench(async () => {
  const base = requirePostgres();
  const serverPort = Number(new URL(base).port || 5432);
  const url = await serviceDatabase(base);
  const trees = [await startTree(serviceRoot === thisTree ? "service" : `service (${serviceRoot})`, url, serviceRoot)];
  if (beforeRoot) trees.push(await startTree(`before (${beforeRoot})`, await blankDatabase(base, "before"), beforeRoot));
  const bare = startAnchor("bare-accept-server.ts", { DATABASE_URL: url });
  const [, bareUrl = ""] = await bare.waitFor(/listening on (http:\/\/\S+)/);
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
  const tuplesRead = async (tree: Tree) => {
    const [row] = await tree.sql<{ n: string }[]>`
      select tup_returned as n from pg_stat_database where datname = current_database()`;
    return Number(row?.n ?? 0);
  };
  /** Statistics reach pg_stat_database up to a second after a statement; wait for them to settle. */
  const settle = () => Bun.sleep(1500);

  /** A reading of a tree's API and worker, each with its backends; `spent` gives the CPU of each since then. */
  async function treeReading(tree: Tree) {
    const [api, worker] = await Promise.all([sample(tree.api), sample(tree.worker)]);
    return {
      async spent() {
        const [apiNow, workerNow] = await Promise.all([sample(tree.api), sample(tree.worker)]);
        return { api: cpuBetween(api, apiNow), worker: cpuBetween(worker, workerNow) };
      },
    };
  }

  async function atRest(label: string) {
    // Quiet first: compiling at start-up and collecting after the load are over in a few seconds, not the rest cost.
    await Bun.sleep(idleSettleSeconds * 1000);
    const readings = await Promise.all(trees.map(treeReading));
    await Bun.sleep(idleSeconds * 1000);
    const spent = await Promise.all(readings.map((reading) => reading.spent()));
    const perSecond = (ms: number) => (ms / idleSeconds).toFixed(2);
    spent.forEach(({ api, worker }, i) => {
      const tree = trees[i] as Tree;
      console.log(
        `at rest, ${label}, ${tree.label}: worker ${perSecond(worker.process)} + its backends ` +
          `${perSecond(worker.backends)} ms/s; API ${perSecond(api.process)} + its backends ${perSecond(api.backends)} ms/s`,
      );
      tree.idle.push((worker.process + worker.backends) / idleSeconds);
    });
  }

  async function serviceSide(tree: Tree, counted: boolean) {
    await settle();
    const tuples0 = await tuplesRead(tree);
    const reading = await treeReading(tree);
    const progress: OpenLoopProgress = { sent: 0, answered: 0, ok: 0, failed: 0, behind: 0 };
    await openLoop(tree.targets, rate, seconds, progress);
    while ((await backlog(tree.sql)).open > 0 && !stopping()) await Bun.sleep(20);
    const { api: a, worker: w } = await reading.spent();
    await settle();
    const tuples = (await tuplesRead(tree)) - tuples0;
    const vends = Math.max(progress.ok, 1);
    if (counted) {
      tree.figures.accept.push((a.process + a.backends) / vends);
      tree.figures.process.push((w.process + w.backends) / vends);
      tree.figures.tuples.push(tuples / vends);
      tree.parts.api.push(a.process / vends);
      tree.parts.apiBackends.push(a.backends / vends);
      tree.parts.worker.push(w.process / vends);
      tree.parts.workerBackends.push(w.backends / vends);
    }
    return (
      `${tree.label}: ${progress.ok} vends, accept ${((a.process + a.backends) / vends).toFixed(2)} ms, ` +
      `process ${((w.process + w.backends) / vends).toFixed(2)} ms, ${(tuples / vends).toFixed(0)} tuples read per vend`
    );
  }

  const bareFigures = { total: [] as number[], process: [] as number[], backends: [] as number[] };
  async function bareSide(counted: boolean) {
    const before = await sample(bare);
    const progress: OpenLoopProgress = { sent: 0, answered: 0, ok: 0, failed: 0, behind: 0 };
    await openLoop(anchor, rate, seconds, progress);
    const b = cpuBetween(before, await sample(bare));
    const accepts = Math.max(progress.ok, 1);
    if (counted) {
      bareFigures.total.push((b.process + b.backends) / accepts);
      bareFigures.process.push(b.process / accepts);
      bareFigures.backends.push(b.backends / accepts);
    }
    return `bare: ${progress.ok} accepts, ${((b.process + b.backends) / accepts).toFixed(2)} ms`;
  }

  await atRest("before the load");
  for (let round = 0; round <= rounds && !stopping(); round++) {
    const counted = round > 0;
    const sides = [...trees.map((tree) => () => serviceSide(tree, counted)), () => bareSide(counted)];
    // Each side goes first in turn: none always follows the same neighbour's backlog or warm cache.
    const order = sides.map((_, i) => sides[(i + round) % sides.length] as () => Promise<string>);
    const said: string[] = [];
    for (const side of order) said.push(await side());
    console.log(`${round === 0 ? "warm-up" : `round ${round}`}: ${said.join("; ")}`);
  }
  await atRest(`after ${rounds + 1} rounds`);

  const ratio = (a: number[], b: number[]) => a.map((x, i) => x / (b[i] ?? Number.NaN));
  console.log(`\n${"per vend".padEnd(46)} ${"min / median / max".padStart(24)}`);
  line("anchor: bare server + its backends", bareFigures.total, "ms CPU");
  line("  bare server process", bareFigures.process, "ms CPU");
  line("  its backends", bareFigures.backends, "ms CPU");
  for (const tree of trees) {
    console.log(`\n${tree.label}`);
    line("accept: API + its backends", tree.figures.accept, "ms CPU");
    line("  API process", tree.parts.api, "ms CPU");
    line("  its backends", tree.parts.apiBackends, "ms CPU");
    line("process: worker + its backends", tree.figures.process, "ms CPU");
    line("  worker process", tree.parts.worker, "ms CPU");
    line("  its backends", tree.parts.workerBackends, "ms CPU");
    line("tuples read (tup_returned) per vend", tree.figures.tuples, "tuples", 0);
    line("ratio processing / accepting (target ≤ 1.0)", ratio(tree.figures.process, tree.figures.accept), "");
    line("ratio accepting / bare anchor (target ≤ 1.3)", ratio(tree.figures.accept, bareFigures.total), "");
    console.log(`tuples read per vend by round (flat is the target): ${tree.figures.tuples.map((t) => t.toFixed(0)).join(", ")}`);
    const [hot] = await tree.sql<{ updates: string; hot: string }[]>`
      select sum(n_tup_upd) as updates, sum(n_tup_hot_upd) as hot from pg_stat_user_tables
      where relname = 'transactions' or relname like 'transactions\\_y%'`;
    console.log(`transactions: ${hot?.hot} of ${hot?.updates} row updates were HOT (wrote no index entry)`);
    const readers = await tree.sql<{ name: string; scans: string; tuples: string }[]>`
      select relname || ' (seq scan)' as name, seq_scan as scans, seq_tup_read as tuples from pg_stat_user_tables where seq_tup_read > 0
      union all
      select indexrelname, idx_scan, idx_tup_read from pg_stat_user_indexes where idx_tup_read > 0
      order by tuples desc limit 6`;
    console.log(`where the tuples were read: ${readers.map((r) => `${r.name} ${r.tuples} in ${r.scans} scans`).join("; ")}`);
    console.log(
      `worker + its backends at rest: ${tree.idle.map((ms) => ms.toFixed(2)).join(" ms/s before, ")} ms/s after (target ≤ 5)`,
    );
  }
});
