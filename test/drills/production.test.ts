import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createEmptyTestDatabase } from "../helpers/database.ts";
import { freePort } from "../helpers/private-cluster.ts";
import { childEnv, type StartedProcess, spawnProcess } from "../helpers/process.ts";

/**
 * Production as an operator installs it, on PostgreSQL: the standalone executables from `npm run build`, run
 * from a directory with nothing else in it, and the source tree installed with `npm ci --omit=dev`. Each
 * migrates an empty database (`vend migrate --check` refuses first), serves (`vend serve`) and processes
 * (`vend work`) in two processes, and a vend bought with `vendctl` reaches `successful`.
 */
const root = join(import.meta.dir, "../..");
const postgres = Boolean(process.env.DATABASE_URL);
const scratch = mkdtempSync(join(tmpdir(), "vend-production-"));
const processes: StartedProcess[] = [];
const databases: { drop(): Promise<void> }[] = [];

/** Whatever still runs in the scratch folder: `npm run` passes no SIGKILL on to the process it started. */
function killLeftovers(): void {
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      if (readlinkSync(`/proc/${pid}/cwd`).startsWith(scratch)) process.kill(Number(pid), "SIGKILL");
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
}

afterAll(async () => {
  await Promise.all(processes.splice(0).map((p) => p.stop("SIGKILL")));
  killLeftovers();
  await Promise.all(databases.splice(0).map((database) => database.drop()));
  rmSync(scratch, { recursive: true, force: true });
});

/** How an install runs `vend COMMAND` and `vendctl COMMAND`, and where. */
interface Install {
  cwd: string;
  vend(...args: string[]): string[];
  vendctl(...args: string[]): string[];
}

/** Runs a command to its end in the install's directory; its exit code and output. */
async function run(install: Install, command: string[], env: Record<string, string | undefined>) {
  const proc = Bun.spawn(command, { cwd: install.cwd, env: env as Record<string, string>, stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([
    proc.exited,
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ]);
  return { code, stdout, stderr, output: stdout + stderr };
}

/** A long-running role (`serve`, `work`) started in the install's directory. */
function start(install: Install, role: string, env: Record<string, string | undefined>): StartedProcess {
  const started = spawnProcess(install.vend(role), env, install.cwd);
  processes.push(started);
  return started;
}

const stackFrame = /^\s+at /m;

/**
 * Migrate, serve, work, fund, vend, list: what every production install must do. Money: the test wallet is
 * funded 1,000 NGN and holds exactly that less the vend's charge at the end (no charge twice, none lost).
 */
async function deliverVend(install: Install): Promise<{ apiExit: number; workerExit: number }> {
  const database = await createEmptyTestDatabase();
  databases.push(database);
  const port = await freePort();
  const env = childEnv({ DATABASE_URL: database.url, PORT: String(port), LOG_LEVEL: "info" });
  const cliEnv = {
    ...env,
    VENDCTL_BASE_URL: `http://127.0.0.1:${port}`,
    VENDCTL_CONFIG_DIR: join(install.cwd, ".vendctl"),
    NO_COLOR: "1",
  };

  const before = await run(install, install.vend("migrate", "--check"), env);
  expect(before.code).toBe(1);
  expect(before.output).toContain("pending: 0000_init");
  expect(before.output).not.toMatch(stackFrame);
  const migrated = await run(install, install.vend("migrate"), env);
  expect(migrated.output).toContain("Migrations applied (postgres)");
  expect(migrated.code).toBe(0);
  const after = await run(install, install.vend("migrate", "--check"), env);
  expect(after.output).toContain("The database schema is up to date (postgres).");
  expect(after.code).toBe(0);

  const api = start(install, "serve", env);
  const [, key = ""] = await api.waitFor(/Test API key \(shown once, store it now\): (rg_test_\w+)/);
  await api.waitFor(/Vend API listening on/);
  const worker = start(install, "work", env);
  await worker.waitFor(/Vend worker running/);

  const docs = await fetch(`http://127.0.0.1:${port}/docs`);
  expect(docs.status).toBe(200);
  expect(await docs.text()).toContain("/docs/scalar.js");
  const script = await fetch(`http://127.0.0.1:${port}/docs/scalar.js`);
  expect(script.status).toBe(200);
  expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000);

  const withKey = { ...cliEnv, VENDCTL_API_KEY: key };
  const funded = await run(install, install.vendctl("wallet", "fund", "1000", "--json"), withKey);
  expect(funded.code).toBe(0);
  const vend = await run(
    install,
    install.vendctl(
      "vend",
      "airtime",
      "--network",
      "mtn",
      "--phone",
      "08031234567",
      "--amount",
      "100",
      "--wait",
      "30",
      "--yes",
      "--json",
    ),
    withKey,
  );
  expect(vend.code).toBe(0);
  const order = JSON.parse(vend.stdout) as { reference: string; status: string; price_kobo: number };
  // `vend serve` runs no background work: only the `vend work` process can have taken it to its end.
  expect(order.status).toBe("successful");

  const listed = await run(install, install.vendctl("transactions", "list", "--json"), withKey);
  expect(listed.code).toBe(0);
  expect((JSON.parse(listed.stdout) as { reference: string; status: string }[]).map((t) => [t.reference, t.status])).toEqual([
    [order.reference, "successful"],
  ]);
  const balance = await run(install, install.vendctl("wallet", "balance", "--json"), withKey);
  const wallet = JSON.parse(balance.stdout) as { available_kobo: number; held_kobo: number };
  expect(wallet.available_kobo).toBe(100_000 - order.price_kobo);
  expect(wallet.held_kobo).toBe(0);

  const [apiExit, workerExit] = [await api.stop("SIGTERM"), await worker.stop("SIGTERM")];
  expect(api.output()).toMatch(/Vend API stopped \(SIGTERM\) in \d+\.\d s/);
  expect(worker.output()).toMatch(/Vend worker stopped \(SIGTERM\) in \d+\.\d s/);
  for (const output of [api.output(), worker.output()]) expect(output).not.toMatch(stackFrame);
  return { apiExit, workerExit };
}

describe.skipIf(!postgres)("production on PostgreSQL", () => {
  test("dist/vend and dist/vendctl from a directory with nothing else: versions, migrate, serve, work, a vend to successful, /docs, vendctl listing it", async () => {
    const build = join(scratch, "build");
    const built = await run({ cwd: root, vend: () => [], vendctl: () => [] }, [process.execPath, "scripts/build.ts"], {
      ...process.env,
      BUILD_OUT: build,
    });
    expect(built.code).toBe(0);
    // Only the two files: no node_modules, no source, no contract beside them.
    const bare = join(scratch, "bare");
    mkdirSync(bare);
    for (const name of ["vend", "vendctl"]) copyFileSync(join(build, name), join(bare, name));
    rmSync(build, { recursive: true, force: true });
    const install: Install = {
      cwd: bare,
      vend: (...args) => [join(bare, "vend"), ...args],
      vendctl: (...args) => [join(bare, "vendctl"), ...args],
    };
    // No Bun on the PATH either: the executables carry their runtime.
    const env = { ...childEnv({}), PATH: "/usr/bin:/bin" };
    for (const name of ["vend", "vendctl"] as const) {
      const version = await run(install, install[name]("--version"), env);
      expect(version.code).toBe(0);
      expect(version.stdout.trim()).toMatch(
        new RegExp(`^${name} \\d+\\.\\d+\\.\\d+ \\(commit [0-9a-f]{12}(-modified)?, built \\d{4}-\\d\\d-\\d\\dT[\\d:]+Z\\)$`),
      );
    }
    expect(await deliverVend(install)).toEqual({ apiExit: 0, workerExit: 0 });
  }, 240_000);

  test("npm ci --omit=dev, then the documented commands: npm run migrate, npm run serve, npm run work", async () => {
    const tree = join(scratch, "tree");
    // The committed files and this work tree's changes to them, as a clean clone would have them.
    const files = Bun.spawnSync(["git", "ls-files", "-z"], { cwd: root }).stdout.toString().split("\0").filter(Boolean);
    for (const file of files) {
      if (!existsSync(join(root, file))) continue;
      mkdirSync(dirname(join(tree, file)), { recursive: true });
      copyFileSync(join(root, file), join(tree, file));
    }
    const npm = (...args: string[]) => ["npm", ...args];
    const installed = await run(
      { cwd: tree, vend: () => [], vendctl: () => [] },
      npm("ci", "--omit=dev", "--no-audit", "--no-fund"),
      {
        ...process.env,
        CI: "true",
      },
    );
    expect(installed.output).not.toContain("not found");
    expect(installed.code).toBe(0);
    // A production install: the run-time Bun is there, the development tools are not.
    expect(existsSync(join(tree, "node_modules/.bin/bun"))).toBe(true);
    expect(existsSync(join(tree, "node_modules/@biomejs/biome"))).toBe(false);
    // npm run answers a SIGTERM it passed on with 143 whatever the process's own exit; its "stopped" line is checked.
    await deliverVend({
      cwd: tree,
      vend: (command, ...args) => npm("run", "--silent", command ?? "start", ...(args.length > 0 ? ["--", ...args] : [])),
      vendctl: (...args) => [join(tree, "cli/vendctl.js"), ...args],
    });
  }, 300_000);
});
