import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/load-config.ts";

/**
 * The deployment files in ops/: the systemd units pass `systemd-analyze verify` with nothing said, keep their
 * sandbox, and stop after the drain; the Containerfile runs `vend serve` unprivileged, and its health check
 * works on the pinned Bun's compiled executables.
 */
const root = join(import.meta.dir, "../..");
const read = (path: string) => readFileSync(join(root, path), "utf8");
const installedPath = "/usr/local/bin/vend";
const systemdAnalyze = Bun.which("systemd-analyze");

/** Each [section]'s assignments in order; an empty value (`CapabilityBoundingSet=`) is kept, as systemd reads it. */
function parseUnit(text: string): Map<string, [string, string][]> {
  const sections = new Map<string, [string, string][]>();
  let current: [string, string][] | undefined;
  for (const line of text.split("\n").map((l) => l.trim())) {
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = line.match(/^\[(.+)\]$/)?.[1];
    if (header !== undefined) {
      current = [];
      sections.set(header, current);
      continue;
    }
    const at = line.indexOf("=");
    if (!current || at < 0) throw new Error(`not an assignment inside a section: ${line}`);
    current.push([line.slice(0, at), line.slice(at + 1)]);
  }
  return sections;
}

const units = {
  "vend-api.service": { role: "serve", installed: true },
  "vend-worker.service": { role: "work", installed: true },
  "vend-migrate.service": { role: "migrate", installed: false },
} as const;
type UnitName = keyof typeof units;
const unitNames = Object.keys(units) as UnitName[];

function unit(name: UnitName) {
  const sections = parseUnit(read(`ops/systemd/${name}`));
  const all = (section: string, key: string) =>
    (sections.get(section) ?? []).filter(([k]) => k === key).map(([, value]) => value);
  /** The value systemd uses for a single-valued setting: the last assignment. */
  const last = (section: string, key: string) => all(section, key).at(-1);
  return { sections, all, last };
}

/** Seconds from a systemd time span such as `30s`, `1min 30s` or `90`. */
function spanSeconds(span: string): number {
  const factors: Record<string, number> = { "": 1, s: 1, sec: 1, m: 60, min: 60, h: 3600 };
  let total = 0;
  for (const [, amount, suffix = ""] of span.matchAll(/(\d+)\s*([a-z]*)/g)) {
    const factor = factors[suffix];
    if (factor === undefined) throw new Error(`unknown time unit in ${span}`);
    total += Number(amount) * factor;
  }
  return total;
}

/** The environment file as systemd reads it: NAME=value lines, comments and blank lines skipped. */
function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split("\n").map((l) => l.trim())) {
    if (line === "" || line.startsWith("#")) continue;
    const at = line.indexOf("=");
    if (at < 0) throw new Error(`not NAME=value: ${line}`);
    env[line.slice(0, at)] = line.slice(at + 1);
  }
  return env;
}

const sandbox: [string, string][] = [
  ["DynamicUser", "yes"],
  ["NoNewPrivileges", "yes"],
  ["ProtectSystem", "strict"],
  ["ProtectHome", "yes"],
  ["PrivateTmp", "yes"],
  ["PrivateDevices", "yes"],
  ["ProtectKernelTunables", "yes"],
  ["ProtectKernelModules", "yes"],
  ["ProtectKernelLogs", "yes"],
  ["ProtectControlGroups", "yes"],
  ["RestrictAddressFamilies", "AF_INET AF_INET6 AF_UNIX"],
  ["RestrictNamespaces", "yes"],
  ["LockPersonality", "yes"],
  // Bun's JIT maps writable and executable memory: on, the runtime would lose its JIT or fail to start.
  ["MemoryDenyWriteExecute", "no"],
  ["CapabilityBoundingSet", ""],
  ["KillSignal", "SIGTERM"],
  ["EnvironmentFile", "/etc/vend/vend.env"],
];

describe("ops/systemd units", () => {
  const serviceSetting = (name: UnitName, key: string) => {
    const value = unit(name).last("Service", key);
    if (value === undefined) throw new Error(`${name} sets no ${key}`);
    return value;
  };

  for (const name of unitNames) {
    const { role } = units[name];

    test(`${name}: runs \`vend ${role}\` from ${installedPath} with the environment file and the sandbox`, () => {
      const { last, all } = unit(name);
      expect(last("Service", "ExecStart")).toBe(`${installedPath} ${role}`);
      const settings = Object.fromEntries(sandbox.map(([key]) => [key, last("Service", key)]));
      expect(settings).toEqual(Object.fromEntries(sandbox));
      expect(all("Service", "SystemCallFilter")).toContain("@system-service");
      expect(Number(last("Service", "LimitNOFILE"))).toBeGreaterThanOrEqual(65536);
    });

    test(`${name}: TimeoutStopSec outlasts the drain the example environment sets (delay + grace + 5 s)`, () => {
      const config = loadConfig(parseEnvFile(read("ops/systemd/vend.env.example")));
      const drain = config.shutdownDelaySeconds + config.shutdownGraceSeconds + 5;
      const timeout = serviceSetting(name, "TimeoutStopSec");
      expect(spanSeconds(timeout)).toBeGreaterThan(drain);
    });
  }

  for (const name of ["vend-api.service", "vend-worker.service"] as const) {
    test(`${name}: starts after vend-migrate, restarts on failure, is enabled by multi-user.target`, () => {
      const { all, last: lastOf } = unit(name);
      expect(all("Unit", "Requires").join(" ").split(/\s+/)).toContain("vend-migrate.service");
      expect(all("Unit", "After").join(" ").split(/\s+/)).toContain("vend-migrate.service");
      expect(lastOf("Service", "Restart")).toBe("on-failure");
      expect(spanSeconds(lastOf("Service", "RestartSec") ?? "0")).toBeGreaterThan(0);
      expect(lastOf("Install", "WantedBy")).toBe("multi-user.target");
    });
  }

  test("vend-migrate.service: a oneshot that stays active, so the API's restarts do not run it again", () => {
    const { last: lastOf, sections } = unit("vend-migrate.service");
    expect(lastOf("Service", "Type")).toBe("oneshot");
    expect(lastOf("Service", "RemainAfterExit")).toBe("yes");
    expect(sections.has("Install")).toBe(false);
  });

  test("vend.env.example: a configuration the service accepts, on PostgreSQL", () => {
    const env = parseEnvFile(read("ops/systemd/vend.env.example"));
    expect(env.DATABASE_URL).toStartWith("postgres://");
    expect(() => loadConfig(env)).not.toThrow();
  });
});

describe.skipIf(!systemdAnalyze)(
  `systemd-analyze on the units${systemdAnalyze ? "" : " (skipped: systemd-analyze is not installed)"}`,
  () => {
    // verify checks that ExecStart's program exists: the units are copied with an executable stub in its place.
    let dir = "";
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "vend-units-"));
      const stub = join(dir, "vend");
      writeFileSync(stub, "#!/bin/sh\nexit 0\n");
      chmodSync(stub, 0o755);
      for (const name of unitNames) {
        const text = read(`ops/systemd/${name}`);
        expect(text).toContain(`ExecStart=${installedPath} `);
        writeFileSync(join(dir, name), text.replaceAll(installedPath, stub));
      }
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const analyze = (...args: string[]) => {
      const run = Bun.spawnSync([systemdAnalyze ?? "systemd-analyze", ...args], { cwd: dir, stdout: "pipe", stderr: "pipe" });
      return { code: run.exitCode, output: `${run.stdout.toString()}${run.stderr.toString()}` };
    };

    for (const name of unitNames) {
      test(`${name}: systemd-analyze verify says nothing`, () => {
        expect(analyze("verify", join(dir, name))).toEqual({ code: 0, output: "" });
      });

      test(`${name}: systemd-analyze security rates its exposure 1.5 or lower`, () => {
        const { code, output } = analyze("security", "--offline=yes", "--no-pager", join(dir, name));
        expect({ code, unsupported: /unrecognized option/.test(output) }).toEqual({ code: 0, unsupported: false });
        const exposure = output.match(/Overall exposure level for \S+: (\d+\.\d+)/)?.[1];
        expect(Number(exposure)).toBeLessThanOrEqual(1.5);
      });
    }
  },
);

/** The Containerfile's instructions: continuation lines joined, comments dropped. */
function instructions(text: string): { op: string; args: string }[] {
  const joined = text
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("#"))
    .join("\n")
    .replace(/\\\n/g, " ");
  return joined
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .map((line) => {
      const [op = "", ...rest] = line.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(" ") };
    });
}

describe("ops/Containerfile", () => {
  const steps = instructions(read("ops/Containerfile"));
  const lastOf = (op: string) => steps.filter((step) => step.op === op).at(-1)?.args;

  test("packages the prebuilt dist/vend on a glibc Debian image", () => {
    expect(lastOf("FROM")).toMatch(/debian:bookworm-slim$|distroless\/cc/);
    expect(steps.filter((step) => step.op === "COPY").map((step) => step.args.split(/\s+/).slice(-2))).toContainEqual([
      "dist/vend",
      installedPath,
    ]);
  });

  test("runs as a fixed non-root UID", () => {
    const user = lastOf("USER") ?? "";
    expect(user).toMatch(/^\d+(:\d+)?$/);
    expect(Number(user.split(":")[0])).toBeGreaterThan(0);
  });

  test("listens on 0.0.0.0:8080, stops with SIGTERM, and its ENTRYPOINT + CMD is `vend serve`", () => {
    const env = steps.filter((step) => step.op === "ENV").flatMap((step) => step.args.split(/\s+/));
    expect(env).toContain("HOST=0.0.0.0");
    expect(lastOf("EXPOSE")).toBe("8080");
    expect(lastOf("STOPSIGNAL")).toBe("SIGTERM");
    const command = [...JSON.parse(lastOf("ENTRYPOINT") ?? "null"), ...JSON.parse(lastOf("CMD") ?? "null")];
    expect(command).toEqual([installedPath, "serve"]);
  });

  describe("HEALTHCHECK", () => {
    const healthcheck = lastOf("HEALTHCHECK") ?? "";
    const argv = JSON.parse(healthcheck.slice(healthcheck.indexOf("CMD ") + 4)) as string[];
    let status = 200;
    const server = Bun.serve({
      port: 0,
      fetch: (request) => new Response(null, { status: new URL(request.url).pathname === "/readyz" ? status : 404 }),
    });
    let dir = "";

    // The image's executable is a compiled Bun program: compile a stand-in with the pinned Bun to run the check with.
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "vend-healthcheck-"));
      writeFileSync(join(dir, "entry.ts"), 'console.log("the embedded program, not the health check");\nprocess.exit(3);\n');
      const built = Bun.spawnSync(
        [process.execPath, "build", "--compile", join(dir, "entry.ts"), "--outfile", join(dir, "vend")],
        {
          stdout: "pipe",
          stderr: "pipe",
        },
      );
      expect({ code: built.exitCode, stderr: built.stderr.toString() }).toEqual({ code: 0, stderr: "" });
    });
    afterAll(() => {
      server.stop(true);
      rmSync(dir, { recursive: true, force: true });
    });

    // Spawned, not spawnSync: the server answering the check lives in this process's event loop.
    const check = (port: number | undefined) =>
      Bun.spawn(
        argv.map((arg) => (arg === installedPath ? join(dir, "vend") : arg)),
        { env: { PORT: String(port ?? "unset") }, stdout: "pipe", stderr: "pipe", timeout: 10_000 },
      ).exited;

    test("asks /readyz through the executable itself, with a timeout", () => {
      expect(healthcheck).toMatch(/--timeout=\d+s/);
      expect(argv).toContain(installedPath);
      expect(argv.join(" ")).toContain("/readyz");
    });

    test("healthy while /readyz answers 200, unhealthy on 503 and when nothing listens", async () => {
      status = 200;
      expect(await check(server.port)).toBe(0);
      status = 503;
      expect(await check(server.port)).toBe(1);
      const closed = Bun.serve({ port: 0, fetch: () => new Response() });
      const freePort = closed.port;
      closed.stop(true);
      expect(await check(freePort)).toBe(1);
    });
  });
});
