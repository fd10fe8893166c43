import { afterAll, describe, expect, test } from "bun:test";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { freePort } from "../helpers/private-cluster.ts";
import { childEnv, processTestMs, type StartedProcess, spawnProcess } from "../helpers/process.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * A process started while its database does not answer yet (nothing listening at DATABASE_URL's port, as while
 * PostgreSQL starts after a reboot): it waits with one line per attempt, live but not ready, and comes up by
 * itself once the database answers; past DATABASE_START_TIMEOUT_SECONDS it stops with one line. Never a stack.
 */
const baseUrl = process.env.DATABASE_URL;
const main = new URL("../../src/main.ts", import.meta.url).pathname;
const stackFrame = /^\s+at /m;
let database: TestDatabase | undefined;
const processes: StartedProcess[] = [];
const proxies: TcpProxy[] = [];

afterAll(async () => {
  await Promise.all(processes.splice(0).map((p) => p.stop("SIGKILL")));
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
  await database?.drop();
});

/** The test database's URL at `port` of 127.0.0.1, where nothing listens until the test says so. */
const at = (url: string, port: number) => Object.assign(new URL(url), { hostname: "127.0.0.1", port: String(port) }).toString();

describe.skipIf(!baseUrl)("starting before the database answers", () => {
  test(
    "vend serve and vend work wait, live and not ready, then come up by themselves when it answers",
    async () => {
      database = await createTestDatabase({ maxConnections: 2 });
      const databasePort = await freePort();
      const apiPort = await freePort();
      const env = { DATABASE_URL: at(database.url ?? "", databasePort), PORT: String(apiPort) };
      const api = spawnProcess([process.execPath, main, "serve"], childEnv(env));
      const worker = spawnProcess([process.execPath, main, "work"], childEnv(env));
      processes.push(api, worker);
      for (const started of [api, worker])
        await started.waitFor(/The database does not answer \(attempt 2: .*\); retrying in 1 s/);

      const health = await fetch(`http://127.0.0.1:${apiPort}/healthz`);
      expect(health.status).toBe(200);
      const ready = await fetch(`http://127.0.0.1:${apiPort}/readyz`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { code: string }).code).toBe("SERVICE_UNAVAILABLE");
      expect(ready.headers.get("retry-after")).toBe("1");
      expect((await fetch(`http://127.0.0.1:${apiPort}/api/v1/wallet`)).status).toBe(503);

      // The database comes: the same processes, no restart.
      const upstream = new URL(baseUrl ?? "");
      proxies.push(await startTcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5432) }, databasePort));
      await api.waitFor(/Vend API listening on/, 60_000);
      await worker.waitFor(/Vend worker running/, 60_000);
      await waitUntil(async () => (await fetch(`http://127.0.0.1:${apiPort}/readyz`)).status === 200, {
        what: "the API ready",
        timeoutMs: 10_000,
      });
      for (const started of [api, worker]) {
        expect(started.proc.exitCode).toBeNull();
        expect(started.output()).not.toMatch(stackFrame);
      }
    },
    processTestMs,
  );

  test(
    "past DATABASE_START_TIMEOUT_SECONDS: one line naming the cause, exit 1",
    async () => {
      const databasePort = await freePort();
      const url = at(baseUrl ?? "", databasePort);
      const api = spawnProcess(
        [process.execPath, main, "serve"],
        childEnv({ DATABASE_URL: url, PORT: "0", DATABASE_START_TIMEOUT_SECONDS: "1" }),
      );
      processes.push(api);
      expect(await api.finished()).toBe(1);
      const lines = api.output().trim().split("\n");
      expect(lines.at(-1)).toMatch(/^the database did not answer within 1 s \(DATABASE_START_TIMEOUT_SECONDS\): .*ECONNREFUSED/);
      expect(api.output()).not.toMatch(stackFrame);
    },
    processTestMs,
  );
});
