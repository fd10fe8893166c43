/**
 * `npm test [-- FILES/FOLDERS/bun test flags]`: the suite, files in parallel.
 *
 * Before the run it makes, once, what every test file clones: on PostgreSQL (DATABASE_URL) a migrated
 * template database, embedded a migrated PGlite's data directory written to a file. It hands them to the
 * files through the environment (test/helpers/database.ts), runs `bun test --parallel`, slowest files first
 * by test/timings/<database>.json, then adds up contract coverage (CONTRACT_COVERAGE=1) and drops every
 * database of the run, also those of a worker that died.
 *
 * TEST_WORKERS sets the number of worker processes (default below, measured on a 2-core machine). Each worker
 * keeps its modules across the files it runs (`--no-isolate`; `--isolate` for a fresh scope per file); every
 * file still gets its own databases.
 * `--update-timings` rewrites the timings file from this run.
 *
 * Files that never use the suite's database (test/helpers/runs-once.ts: the embedded quick start, its data
 * directory, the CLI against a stub) run in the embedded run only: on PostgreSQL they repeated it step for step.
 *
 * On PostgreSQL the drills (test/drills/: several real processes, servers and clusters each) run after the
 * other files, one at a time: beside each other, or beside the other files, they starved on 2 cores (timeouts,
 * retries running out). So do, on either database, the files that measure the service's time against a budget
 * (first line `runsAloneMarker`, test/helpers/runs-once.ts). Given paths, one run takes exactly those. The two
 * runs' counts are added up in a last summary. On the embedded database the drills skip.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { loadExercised, reportCoverage } from "../test/helpers/contract-coverage.ts";
import { dropRunDatabases, prepareSharedDatabases } from "../test/helpers/database.ts";
import { runsAloneFiles, runsOnceFiles } from "../test/helpers/runs-once.ts";

/**
 * Workers by database, measured on 2 cores (test/api: PostgreSQL 41 / 34 / 39 s with 2 / 4 / 6 workers, its
 * tests mostly wait on sockets and the server; PGlite 58 / 36 / 38 / 47 s with 1 / 2 / 3 / 4, each worker
 * running its own database engine on the CPU).
 */
const defaultWorkers = { postgres: 4, pglite: 2 };
const root = join(import.meta.dir, "..");
const args = process.argv.slice(2);
const database = process.env.DATABASE_URL ? "postgres" : "pglite";
const workers = Number(process.env.TEST_WORKERS) || defaultWorkers[database];
const timings = join(root, "test", "timings", `${database}.json`);
const scratch = mkdtempSync(join(tmpdir(), "vend-test-"));
const coverageDir = join(scratch, "coverage");

const started = performance.now();
const children: ReturnType<typeof Bun.spawn>[] = [];
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
  });
const drills = "test/drills";
/** Paths given: one run; otherwise the drills (on PostgreSQL) and the files that run alone get their own lane. */
const givenPaths = args.some((arg) => !arg.startsWith("-"));

let code = 1;
try {
  const shared = await prepareSharedDatabases(join(scratch, "pglite-image.tar"));
  console.log(`test run ${shared.VEND_TEST_RUN}: ${database}, ${workers} workers, databases ready in ${seconds(started)} s`);
  const run = (parallel: number, extra: string[]) => {
    const command = [process.execPath, "test", "--timeout", "120000", `--parallel=${parallel}`];
    // One module registry per worker across its files, as one `bun test` process always had: loading the
    // service's modules again for every file cost 40% of the CPU. `--isolate` brings the fresh scope back.
    if (!args.includes("--isolate")) command.push("--no-isolate");
    if (args.includes("--update-timings")) mkdirSync(dirname(timings), { recursive: true });
    if (existsSync(timings) || args.includes("--update-timings")) command.push(`--timings=${timings}`);
    const child = Bun.spawn([...command, ...args, ...extra], {
      cwd: root,
      env: { ...process.env, ...shared, VEND_TEST_COVERAGE_DIR: coverageDir },
      stdio: ["inherit", givenPaths ? "inherit" : "pipe", givenPaths ? "inherit" : "pipe"],
    });
    children.push(child);
    return child;
  };
  if (givenPaths) {
    code = await run(workers, []).exited;
  } else {
    // On the embedded database every drill skips, and the files that never use the suite's database run.
    const once = database === "postgres" ? runsOnceFiles(root) : [];
    const alone = runsAloneFiles(root);
    const lane = database === "postgres" ? [drills, ...alone] : alone;
    if (once.length > 0) console.log(`${once.length} files that never use the suite's database run in the embedded run only`);
    console.log(`${lane.join(", ")}: one file at a time, after the others`);
    const ignored = [`${drills}/**`, ...once, ...alone].map((path) => `--path-ignore-patterns=${path}`);
    const rest = run(workers, database === "postgres" ? ignored : ignored.slice(1));
    const others = await relayCounting(rest);
    const restCode = await rest.exited;
    // Given no path, `bun test` would take every file: an empty lane is not run.
    const laneRun = lane.length > 0 ? run(1, lane) : undefined;
    const drilled = laneRun ? await relayCounting(laneRun) : { pass: 0, fail: 0 };
    code = restCode || ((await laneRun?.exited) ?? 0);
    // The last summary is the whole run's (what .ci/run reads).
    console.log(
      `\nall files, both runs:\n ${(others?.pass ?? 0) + (drilled?.pass ?? 0)} pass\n ${(others?.fail ?? 0) + (drilled?.fail ?? 0)} fail`,
    );
  }
  if (process.env.CONTRACT_COVERAGE === "1" && !reportCoverage(loadExercised(coverageDir))) code = code || 1;
} finally {
  await dropRunDatabases().catch((error) => console.error(`could not drop this run's databases: ${error}`));
  rmSync(scratch, { recursive: true, force: true });
}
console.log(`test run took ${seconds(started)} s`);
process.exit(code);

/** Copies a run's output through, a line at a time, and reads its counts. */
async function relayCounting(child: ReturnType<typeof Bun.spawn>): Promise<{ pass: number; fail: number }> {
  const counts = { pass: 0, fail: 0 };
  const relay = async (stream: ReadableStream<Uint8Array>, out: NodeJS.WriteStream) => {
    const decoder = new TextDecoder();
    let partial = "";
    const reader = stream.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      const chunk = read.value;
      const lines = (partial + decoder.decode(chunk, { stream: true })).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        const summary = /^\s*(\d+) (pass|fail)$/.exec(line);
        if (summary) counts[summary[2] as "pass" | "fail"] = Number(summary[1]);
        out.write(`${line}\n`);
      }
    }
    if (partial) out.write(partial);
  };
  await Promise.all([
    relay(child.stdout as ReadableStream<Uint8Array>, process.stdout),
    relay(child.stderr as ReadableStream<Uint8Array>, process.stderr),
  ]);
  return counts;
}

function seconds(since: number): string {
  return ((performance.now() - since) / 1000).toFixed(1);
}
