// Runs once, in the embedded run: it never uses the suite's database (see test/helpers/runs-once.ts).
import { afterAll, describe, expect, test } from "bun:test";
import { lstatSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { openDatabase } from "../../src/db/client.ts";
import { freePort } from "../helpers/private-cluster.ts";
import { childEnv, processTestMs, spawnProcess } from "../helpers/process.ts";

/**
 * The quick start as a newcomer meets it (`npm start`, the embedded database, LOG_LEVEL at its default): a
 * port already taken, the next start, who can reach it, who can read its files, Ctrl-C.
 */
const main = join(import.meta.dir, "../../src/main.ts");
const root = mkdtempSync(join(tmpdir(), "vend-first-start-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** `npm start` as a person runs it: no SHUTDOWN_DELAY_SECONDS set, LOG_LEVEL at its default. */
function start(dataDir: string, port: number) {
  return spawnProcess(
    [process.execPath, main],
    childEnv({ VEND_DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: undefined, SHUTDOWN_DELAY_SECONDS: undefined }),
  );
}

/** Every mode under `path` that is not private to its user: `0700` directories, `0600` files. */
function notPrivate(path: string): string[] {
  const stat = lstatSync(path);
  const mode = stat.mode & 0o777;
  if (stat.isDirectory())
    return [
      ...(mode === 0o700 ? [] : [`${path} ${mode.toString(8)}`]),
      ...readdirSync(path).flatMap((name) => notPrivate(join(path, name))),
    ];
  return stat.isFile() && mode !== 0o600 ? [`${path} ${mode.toString(8)}`] : [];
}

/** An address of this machine other than loopback, if it has one. */
const outsideAddress = Object.values(networkInterfaces())
  .flat()
  .find((address) => address && address.family === "IPv4" && !address.internal)?.address;

describe("npm start on a new embedded directory", () => {
  test(
    "a port in use: one line, exit 1, nothing created; the next start listens, then prints the key; private files; 127.0.0.1 only; Ctrl-C stops at once and says so",
    async () => {
      const dataDir = join(root, "data");
      const port = await freePort();
      const taken = Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } });
      const refused = start(dataDir, port);
      const code = await refused.finished();
      taken.stop(true);
      expect(code).toBe(1);
      // The progress lines of LOG_LEVEL=info, then the one line: no key, no stack trace.
      const lines = refused.output().trim().split("\n");
      expect(lines.at(-1)).toBe(`port ${port} is in use: set PORT`);
      expect(refused.output()).not.toContain("rg_test_");
      expect(refused.output()).not.toMatch(/^\s+at /m);

      const server = start(dataDir, port);
      const [, key] = await server.waitFor(/Test API key \(shown once, store it now\): (rg_test_\w+)/);
      await server.waitFor(/Vend API listening on http:\/\/127\.0\.0\.1:\d+/);
      // Listening before the account exists: the key comes after the server answers.
      const wallet = await fetch(`http://127.0.0.1:${port}/api/v1/wallet`, { headers: { authorization: `Bearer ${key}` } });
      expect(wallet.status).toBe(200);
      expect(server.output()).toContain("set HOST=0.0.0.0 to listen on every interface");
      if (outsideAddress) {
        const outside = await fetch(`http://${outsideAddress}:${port}/healthz`).then(
          (res) => res.status,
          () => "refused",
        );
        expect(outside).toBe("refused");
      }
      expect(notPrivate(dataDir)).toEqual([]);

      const stopping = performance.now();
      server.proc.kill("SIGINT");
      expect(await server.finished()).toBe(0);
      // No balancer to wait for on the embedded default: not the 2 s delay of PostgreSQL deployments.
      expect(performance.now() - stopping).toBeLessThan(2000);
      expect(server.output()).toMatch(/\nVend API stopped \(SIGINT\) in \d+\.\d s\n/);
      expect(notPrivate(dataDir)).toEqual([]);
    },
    processTestMs,
  );
});

describe("vend config", () => {
  const config = (env: Record<string, string | undefined>) =>
    spawnProcess(
      [process.execPath, main, "config"],
      childEnv({ LOG_LEVEL: undefined, SHUTDOWN_DELAY_SECONDS: undefined, ...env }),
    );

  test(
    "prints the effective settings with every secret redacted; a bad value: one line, exit 2",
    async () => {
      const secrets = {
        ADMIN_TOKEN: "planted-admin-token-0123456789",
        CURSOR_SECRET: "planted-cursor-secret-0123456789abcdef",
        METRICS_TOKEN: "planted-metrics-token-0123456789",
        DATABASE_URL: "postgres://vend:planted-db-password@db.internal:5432/vend",
      };
      const shown = config(secrets);
      expect(await shown.finished()).toBe(0);
      const settings = JSON.parse(shown.output()) as Record<string, unknown> & { operations: Record<string, unknown> };
      expect(settings.adminToken).toBe("[redacted]");
      expect(settings.cursorSecret).toBe("[redacted]");
      expect(settings.operations.metricsToken).toBe("[redacted]");
      expect(settings.databaseUrl).toBe("postgres://vend:redacted@db.internal:5432/vend");
      // With DATABASE_URL: every interface, and the balancer's delay.
      expect(settings.host).toBe("0.0.0.0");
      expect(settings.shutdownDelaySeconds).toBe(2);
      for (const secret of ["planted-admin-token", "planted-cursor-secret", "planted-metrics-token", "planted-db-password"])
        expect(shown.output()).not.toContain(secret);

      const embedded = config({});
      expect(await embedded.finished()).toBe(0);
      expect(JSON.parse(embedded.output())).toMatchObject({ host: "127.0.0.1", shutdownDelaySeconds: 0 });

      const bad = config({ PORT: "eighty" });
      expect(await bad.finished()).toBe(2);
      expect(bad.output()).toBe('Invalid configuration: PORT must be a whole number, got "eighty"\n');
    },
    processTestMs,
  );
});

describe("a schema newer than the code", () => {
  test(
    "vend serve and vend migrate refuse in one line; ALLOW_NEWER_SCHEMA=true starts",
    async () => {
      const dataDir = join(root, "newer");
      const run = (args: string[], env: Record<string, string | undefined> = {}) =>
        spawnProcess([process.execPath, main, ...args], childEnv({ VEND_DATA_DIR: dataDir, PORT: "0", ...env }));
      expect(await run(["migrate"]).finished()).toBe(0);
      // What a newer release's `vend migrate` leaves: a migration this code does not know.
      const handle = await openDatabase({ dataDir });
      await handle.db.execute(
        sql`insert into drizzle.__drizzle_migrations (hash, created_at) values ('from-a-newer-release', 4102444800000)`,
      );
      await handle.close();

      for (const args of [["serve"], ["migrate"], ["migrate", "--check"]]) {
        const refused = run(args);
        expect(await refused.finished()).toBe(1);
        expect(refused.output()).toBe(
          "The database schema is newer than this release (1 migration it does not know): run the release that migrated it, or a later one (or set ALLOW_NEWER_SCHEMA=true to roll back to this one)\n",
        );
      }
      const rolledBack = run(["serve"], { ALLOW_NEWER_SCHEMA: "true" });
      await rolledBack.waitFor(/Vend API listening on/);
      expect(await rolledBack.stop("SIGTERM")).toBe(0);
    },
    processTestMs,
  );
});
