// Runs once, in the embedded run: it never uses the suite's database (see test/helpers/runs-once.ts).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { childEnv, processTestMs, type StartedProcess, spawnProcess } from "../helpers/process.ts";

const main = join(import.meta.dir, "../../src/main.ts");
const racer = join(import.meta.dir, "../helpers/lock-racer.ts");
const migrations = JSON.parse(readFileSync(join(import.meta.dir, "../../src/db/migrations/meta/_journal.json"), "utf8"))
  .entries as { tag: string }[];
const root = mkdtempSync(join(tmpdir(), "vend-startup-"));
const dataDir = join(root, "data");
const stackFrame = /^\s+at /m;

/** A refusal said in one line, with no stack trace: returns that line. */
function oneLine(output: string): string {
  expect(output).not.toMatch(stackFrame);
  const lines = output.trim().split("\n");
  expect(lines).toHaveLength(1);
  return lines[0] ?? "";
}
/** The JSON start-up line (the logger writes after the plain `listening on` line). */
const startupLine = /"msg":"vend service listening"/;

/** `npm start` on an embedded directory, as a person runs it: LOG_LEVEL left at its default (info). */
function start(dir: string, env: Record<string, string> = {}): StartedProcess {
  return spawnProcess([process.execPath, main], childEnv({ VEND_DATA_DIR: dir, PORT: "0", LOG_LEVEL: "info", ...env }));
}

/** The `admin_api` field of the JSON start-up line. */
function adminApiOf(output: string): unknown {
  const line = output.split("\n").find((l) => l.includes('"vend service listening"'));
  return line ? JSON.parse(line).admin_api : undefined;
}

async function runOperatorCreate(dir: string, ...args: string[]) {
  return runTool(dir, "operator", "create", ...args);
}

/** `vend migrate` on `dir`. */
async function runMigrate(dir: string) {
  return runTool(dir, "migrate");
}

/** A `vend` command on `dir`. */
async function runTool(dir: string, ...args: string[]) {
  const env = { ...process.env, DATABASE_URL: undefined, ADMIN_TOKEN: undefined, VEND_DATA_DIR: dir, LOG_LEVEL: "silent" };
  const run = spawnProcess([process.execPath, main, ...args], env);
  const code = await run.finished();
  return { code, output: run.output() };
}

let server: StartedProcess;
let url = "";

beforeAll(async () => {
  // Without the image `npm install` prepares (embedded-image.test.ts): initdb and every migration, as listed.
  server = start(dataDir, { VEND_EMBEDDED_IMAGE: "off" });
  [, url = ""] = await server.waitFor(/listening on (http:\/\/[^\s]+)/, 120_000);
  await server.waitFor(startupLine);
}, 130_000);
afterAll(async () => {
  await server.stop("SIGKILL");
  rmSync(root, { recursive: true, force: true });
});

describe("a first npm start on a fresh embedded directory", () => {
  test("says what it is doing, in order, before it listens", () => {
    const output = server.output();
    const steps = [
      `Opening the embedded database in ${dataDir} (first start: creating it)`,
      "Loading extension pg_trgm",
      ...migrations.map((m, i) => `Migrating the database: ${i + 1} of ${migrations.length}, ${m.tag}`),
      'Creating the first account "default"',
      "Test API key (shown once, store it now)",
      "listening on",
    ];
    const at = steps.map((step) => output.indexOf(step));
    expect(steps.filter((_, i) => (at[i] ?? -1) < 0)).toEqual([]);
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(migrations.length).toBeGreaterThanOrEqual(11);
  });

  test("the start-up line says the admin API is off: no ADMIN_TOKEN and no operator yet", () => {
    expect(adminApiOf(server.output())).toBe("off");
  });
});

describe("vend operator create beside the running server", () => {
  test(
    "creates a working operator through the running server, audited as local-bootstrap",
    async () => {
      const local = join(dataDir, "vend.local.json");
      expect(statSync(local).mode & 0o777).toBe(0o600);
      const created = await runOperatorCreate(dataDir, "--name", "ada", "--role", "admin");
      expect(created.output).not.toMatch(stackFrame);
      expect(created.code).toBe(0);
      const [, token] = created.output.match(/Token \(shown once, store it now\): (op_[0-9A-Za-z]{40})\n/) ?? [];
      expect(created.output).toMatch(/Created operator ada \(admin, [0-9a-f-]{36}\)/);
      const me = await fetch(`${url}/admin/v1/operators/me`, { headers: { authorization: `Bearer ${token}` } });
      expect(me.status).toBe(200);
      expect((await me.json()).data).toMatchObject({ name: "ada", role: "admin", created_by: "local-bootstrap" });
      const audit = await fetch(`${url}/admin/v1/audit?action=createOperator`, { headers: { authorization: `Bearer ${token}` } });
      expect((await audit.json()).data.items).toMatchObject([
        { operator: "local-bootstrap", operator_id: null, action: "createOperator" },
      ]);

      const again = await runOperatorCreate(dataDir, "--name", "ada", "--role", "viewer");
      expect(again.code).toBe(1);
      expect(again.output.trim().split("\n")).toHaveLength(1);
      expect(again.output).toContain("exists already");
    },
    processTestMs,
  );

  test("the local secret is refused without the right bearer, and off loopback-only use (a forwarded request)", async () => {
    const { secret } = JSON.parse(readFileSync(join(dataDir, "vend.local.json"), "utf8")) as { secret: string };
    const as = (headers: Record<string, string>) => fetch(`${url}/admin/v1/operators/me`, { headers });
    expect((await as({ authorization: `Bearer ${secret}` })).status).toBe(200);
    expect((await as({ authorization: `Bearer ${secret}`, "x-forwarded-for": "203.0.113.9" })).status).not.toBe(200);
    expect((await as({ authorization: `Bearer ${secret}x` })).status).not.toBe(200);
  });

  test(
    "the file is removed at shutdown; the next start says operator tokens are on",
    async () => {
      expect(await server.stop("SIGTERM")).toBe(0);
      expect(existsSync(join(dataDir, "vend.local.json"))).toBe(false);
      const again = start(dataDir);
      try {
        await again.waitFor(startupLine);
        expect(adminApiOf(again.output())).toBe("operator tokens");
        // Not a first start: no creation, no migrations, no account.
        expect(again.output()).not.toContain("first start");
        expect(again.output()).not.toContain("Migrating the database");
      } finally {
        await again.stop();
      }
      const withToken = start(dataDir, { ADMIN_TOKEN: "startup-admin-token-0123456789abcdef" });
      try {
        await withToken.waitFor(startupLine);
        expect(adminApiOf(withToken.output())).toBe("admin token and operator tokens");
      } finally {
        await withToken.stop();
      }
    },
    processTestMs,
  );

  test(
    "a directory held by a process that takes no local requests: one line saying what to do, exit 1",
    async () => {
      const dir = join(root, "held");
      mkdirSync(dir);
      const holder = spawnProcess([process.execPath, racer, dir], childEnv({}));
      try {
        await holder.waitFor(/won/);
        const run = await runOperatorCreate(dir, "--name", "bob", "--role", "viewer");
        expect(run.code).toBe(1);
        const line = oneLine(run.output);
        expect(line).toContain(`pid ${holder.proc.pid}`);
        expect(line).toContain("ADMIN_TOKEN");
        // npm run migrate beside it: the same one line (the holder applied the migrations when it started).
        const migrate = await runMigrate(dir);
        expect(migrate.code).toBe(1);
        expect(oneLine(migrate.output)).toContain(`pid ${holder.proc.pid}`);
      } finally {
        await holder.stop("SIGKILL");
      }
    },
    processTestMs,
  );
});

describe("an unusable data directory", () => {
  test(
    "under a regular file: one line naming the directory, exit 1, no stack trace",
    async () => {
      const file = join(root, "a-file");
      writeFileSync(file, "not a directory");
      const dir = join(file, "data");
      const proc = start(dir);
      expect(await proc.finished()).toBe(1);
      const line = oneLine(proc.output());
      expect(line).toContain(dir);
      expect(line).toContain("VEND_DATA_DIR");
      const create = await runOperatorCreate(dir, "--name", "carol", "--role", "viewer");
      expect(create.code).toBe(1);
      oneLine(create.output);
      const migrate = await runMigrate(dir);
      expect(migrate.code).toBe(1);
      oneLine(migrate.output);
    },
    processTestMs,
  );

  // Root ignores permission bits: an immutable directory (chattr +i) refuses even root's writes (EPERM).
  const immutable = Bun.spawnSync(["sh", "-c", "command -v chattr"]).exitCode === 0;
  test.skipIf(!immutable)(
    "immutable (chattr +i, EPERM on vend.lock): one line, exit 1, no stack trace",
    async () => {
      const dir = join(root, "immutable");
      Bun.spawnSync(["mkdir", "-p", dir]);
      const set = Bun.spawnSync(["chattr", "+i", dir]);
      if (set.exitCode !== 0) throw new Error(`chattr +i failed: ${set.stderr.toString()}`);
      try {
        const proc = start(dir);
        expect(await proc.finished()).toBe(1);
        expect(oneLine(proc.output())).toContain(dir);
        expect(readdirSync(dir)).toEqual([]);
      } finally {
        Bun.spawnSync(["chattr", "-i", dir]);
      }
    },
    60_000,
  );
});
