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
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { loadExercised, reportCoverage } from "../test/helpers/contract-coverage.ts";
import { dropRunDatabases, prepareSharedDatabases } from "../test/helpers/database.ts";

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
let child: ReturnType<typeof Bun.spawn> | undefined;
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child?.kill(signal));

let code = 1;
try {
  const shared = await prepareSharedDatabases(join(scratch, "pglite-image.tar"));
  console.log(`test run ${shared.VEND_TEST_RUN}: ${database}, ${workers} workers, databases ready in ${seconds(started)} s`);
  const command = [process.execPath, "test", "--timeout", "120000", `--parallel=${workers}`];
  // One module registry per worker across its files, as one `bun test` process always had: loading the
  // service's modules again for every file cost 40% of the CPU. `--isolate` brings the fresh scope back.
  if (!args.includes("--isolate")) command.push("--no-isolate");
  if (args.includes("--update-timings")) mkdirSync(dirname(timings), { recursive: true });
  if (existsSync(timings) || args.includes("--update-timings")) command.push(`--timings=${timings}`);
  child = Bun.spawn([...command, ...args], {
    cwd: root,
    env: { ...process.env, ...shared, VEND_TEST_COVERAGE_DIR: coverageDir },
    stdio: ["inherit", "inherit", "inherit"],
  });
  code = await child.exited;
  if (process.env.CONTRACT_COVERAGE === "1" && !reportCoverage(loadExercised(coverageDir))) code = code || 1;
} finally {
  await dropRunDatabases().catch((error) => console.error(`could not drop this run's databases: ${error}`));
  rmSync(scratch, { recursive: true, force: true });
}
console.log(`test run took ${seconds(started)} s`);
process.exit(code);

function seconds(since: number): string {
  return ((performance.now() - since) / 1000).toFixed(1);
}
