import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { queryRows } from "../../src/db/rows.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { loadConfig } from "../../src/load-config.ts";
import { apiUrl, fundDefaultAccount, spawnService, summarise } from "../helpers/cluster.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { freePort } from "../helpers/private-cluster.ts";
import { processTestMs, type StartedProcess, spawnProcess } from "../helpers/process.ts";
import { waitUntil } from "../helpers/wait.ts";

// Two API processes behind HAProxy with ops/haproxy.cfg as it is, each restarted in turn (SIGTERM, a new
// process on the same port) under a steady load of vends, reads and long-polls: no client sees anything but 2xx.
// The next process is restarted only once HAProxy's stats socket reports the new one UP, as the README says.
const haproxyBinary = Bun.which("haproxy");
const runs = Boolean(process.env.DATABASE_URL) && Boolean(haproxyBinary);
const haproxyConfig = join(import.meta.dir, "../../ops/haproxy.cfg");
const processes: StartedProcess[] = [];
let database: TestDatabase | undefined;
// The stats socket's directory: the drill's own, not /run/haproxy.
const socketDir = mkdtempSync(join(tmpdir(), "vend-haproxy-"));
const statsSocket = join(socketDir, "vend.sock");

afterAll(async () => {
  await Promise.all(processes.splice(0).map((p) => p.stop("SIGKILL")));
  await database?.drop();
  rmSync(socketDir, { recursive: true, force: true });
});

/**
 * One command to HAProxy's runtime API, as `echo "<command>" | socat stdio <socket>` sends it: its whole answer.
 * No socket (yet) rejects at connect.
 */
async function runtimeCommand(socket: string, command: string): Promise<string> {
  const { promise, resolve, reject } = Promise.withResolvers<string>();
  let answer = "";
  const decoder = new TextDecoder();
  await Bun.connect({
    unix: socket,
    socket: {
      open: (connection) => void connection.write(`${command}\n`),
      data: (_connection, chunk) => {
        answer += decoder.decode(chunk, { stream: true });
      },
      // HAProxy closes the connection once it has answered a command sent outside interactive mode.
      close: () => resolve(answer),
      error: (_connection, error) => reject(error),
    },
  });
  return promise;
}

/** Each server's status in `show stat` (UP; DOWN; "UP 1/2" on its way down; MAINT), by server name. */
async function serverStatuses(socket: string): Promise<Map<string, string>> {
  const [header = "", ...rows] = (await runtimeCommand(socket, "show stat vend_api 4 -1")).trim().split("\n");
  const columns = header.replace(/^# /, "").split(",");
  const [name, status] = [columns.indexOf("svname"), columns.indexOf("status")];
  return new Map(rows.map((row) => row.split(",")).map((fields) => [fields[name] ?? "", fields[status] ?? ""]));
}

interface Load {
  requests: number;
  /** Every answer that was not 2xx, or no answer at all: there must be none. */
  failures: string[];
  /** Reference of each accepted vend by its Idempotency-Key. */
  accepted: Map<string, string>;
  /** Replays of an accepted key that came back with another reference (there must be none). */
  replayMismatches: string[];
  longPolls: number;
}

const vendBody = (phone: string) => JSON.stringify({ product_code: "mtn-airtime", phone_number: phone, amount_kobo: 10_000 });

/** Vend, read and long-poll clients through `url` until `signal` aborts. */
function steadyLoad(url: string, key: string, signal: AbortSignal): { load: Load; done: Promise<void> } {
  const load: Load = { requests: 0, failures: [], accepted: new Map(), replayMismatches: [], longPolls: 0 };
  const headers = { authorization: `Bearer ${key}` };
  const pending: string[] = [];
  let sent = 0;
  const call = async (method: string, path: string, init: RequestInit = {}) => {
    load.requests += 1;
    try {
      const res = await fetch(`${url}${path}`, { method, ...init, headers: { ...headers, ...init.headers } });
      const text = await res.text();
      if (res.status >= 300) load.failures.push(`${method} ${path} -> ${res.status} ${text}`);
      return res.status < 300 ? (JSON.parse(text) as { data: { reference: string; status: string } }).data : undefined;
    } catch (error) {
      load.failures.push(`${method} ${path} -> no answer: ${String(error)}`);
      return undefined;
    }
  };
  const vend = (idempotencyKey: string, phone: string) =>
    call("POST", "/api/v1/vend", {
      headers: { "content-type": "application/json", "idempotency-key": idempotencyKey },
      body: vendBody(phone),
    });
  const vendClient = async () => {
    while (!signal.aborted) {
      const i = sent++;
      const idempotencyKey = `roll-${i}`;
      // Every fourth order stays pending until the sandbox's callback (through the balancer) completes it.
      const phone = i % 4 === 0 ? "08031232222" : "08031234567";
      const accepted = await vend(idempotencyKey, phone);
      if (accepted) {
        load.accepted.set(idempotencyKey, accepted.reference);
        if (i % 4 === 0) pending.push(accepted.reference);
      }
      // The client's retry of an order it already has an answer for: the same order, whichever process answers.
      if (accepted && i % 10 === 0) {
        const replay = await vend(idempotencyKey, phone);
        if (replay && replay.reference !== accepted.reference) load.replayMismatches.push(idempotencyKey);
      }
      await Bun.sleep(10);
    }
  };
  const readClient = async () => {
    for (let i = 0; !signal.aborted; i++) {
      await call("GET", i % 2 === 0 ? "/api/v1/wallet" : "/api/v1/transactions?limit=5");
      await Bun.sleep(10);
    }
  };
  const longPollClient = async () => {
    while (!signal.aborted) {
      const reference = pending.shift();
      if (reference) {
        load.longPolls += 1;
        await call("GET", `/api/v1/transactions/${reference}?wait=10`);
      } else await Bun.sleep(20);
    }
  };
  const clients = [vendClient(), vendClient(), vendClient(), readClient(), readClient(), longPollClient(), longPollClient()];
  return { load, done: Promise.all(clients).then(() => undefined) };
}

describe.skipIf(!runs)("a rolling restart behind HAProxy (ops/haproxy.cfg)", () => {
  test(
    "2 API processes restarted one at a time under load: every answer 2xx, every accepted vend final once, books balance",
    async () => {
      const startedAt = performance.now();
      // Each step as it ends, so a drill that runs out of time shows where it went.
      const step = (what: string) => console.info(`rolling restart: ${what} at ${Math.round(performance.now() - startedAt)} ms`);
      database = await createTestDatabase({ maxConnections: 2 });
      const databaseUrl = database.url ?? "";
      const [lbPort, ...apiPorts] = await Promise.all([freePort(), freePort(), freePort()]);
      const lbUrl = `http://127.0.0.1:${lbPort}`;
      // The service's own default delay on PostgreSQL (the test helpers set 0 for every other process test; the
      // embedded default, which has no balancer in front, is 0 too).
      const env = {
        SHUTDOWN_DELAY_SECONDS: String(loadConfig({ DATABASE_URL: databaseUrl }).shutdownDelaySeconds),
        TRUST_PROXY: "true",
        DATABASE_POOL_SIZE: "4",
        PUBLIC_BASE_URL: lbUrl,
        SANDBOX_CALLBACK_DELAY_MS: "1000",
      };
      const startApi = async (index: number) => {
        const api = spawnService(databaseUrl, "api", { ...env, PORT: String(apiPorts[index]) });
        processes.push(api);
        await apiUrl(api);
        return api;
      };
      const apis = [await startApi(0)];
      const [, key = ""] = await (apis[0] as StartedProcess).waitFor(/Test API key \(shown once, store it now\): (rg_test_\w+)/);
      step("api1 up");
      const worker = spawnService(databaseUrl, "worker", { ...env, WORKER_POLL_MS: "50" });
      processes.push(worker);
      apis.push(await startApi(1));
      step("api2 up");
      const haproxy = spawnProcess([haproxyBinary ?? "haproxy", "-db", "-f", haproxyConfig], {
        PATH: process.env.PATH,
        VEND_LB_BIND: `127.0.0.1:${lbPort}`,
        VEND_API_1: `127.0.0.1:${apiPorts[0]}`,
        VEND_API_2: `127.0.0.1:${apiPorts[1]}`,
        VEND_LB_STATS_SOCKET: statsSocket,
      });
      processes.push(haproxy);
      await waitUntil(async () => (await fetch(`${lbUrl}/readyz`).catch(() => undefined))?.status === 200, {
        what: "HAProxy answering",
        detail: haproxy.output,
      });
      await waitUntil(
        async () => {
          const statuses = await serverStatuses(statsSocket).catch(() => new Map<string, string>());
          return statuses.get("api1") === "UP" && statuses.get("api2") === "UP";
        },
        { what: "the stats socket reporting api1 and api2 UP", detail: haproxy.output },
      );
      await worker.waitFor(/worker/i);
      await fundDefaultAccount(lbUrl, key, 500_000_000);

      step("load starts");
      const stopLoad = new AbortController();
      const { load, done } = steadyLoad(lbUrl, key, stopLoad.signal);
      try {
        await Bun.sleep(1500);
        for (const [index, server] of ["api1", "api2"].entries()) {
          const old = apis[index] as StartedProcess;
          expect(await old.stop("SIGTERM")).toBe(0);
          // SHUTDOWN_DELAY_SECONDS outlasts the check's detection time: the balancer took it out before it exited,
          // so the UP awaited below is the new process's.
          expect((await serverStatuses(statsSocket)).get(server)).toBe("DOWN");
          step(`${server} exited, DOWN on the stats socket`);
          apis[index] = await startApi(index);
          step(`${server} restarted`);
          await waitUntil(async () => (await serverStatuses(statsSocket)).get(server) === "UP", {
            what: `the stats socket reporting ${server} UP again`,
            detail: haproxy.output,
          });
          step(`the stats socket reports ${server} UP`);
        }
        await Bun.sleep(1000);
      } finally {
        stopLoad.abort();
        await done;
      }
      step(
        `load done: ${load.requests} requests (${load.accepted.size} vends, ${load.longPolls} long-polls), ${load.failures.length} not 2xx`,
      );

      // Every request answered 2xx, through both restarts; each failure is shown whole.
      expect(load.failures).toEqual([]);
      expect(load.replayMismatches).toEqual([]);
      expect(haproxy.output()).not.toContain("has no server available");
      expect(load.accepted.size).toBeGreaterThan(100);
      expect(load.longPolls).toBeGreaterThan(10);

      // Books: each accepted key is one transaction, final, vended once, settled once; wallets agree with the ledger.
      const references = [...load.accepted.values()];
      const unfinished = () =>
        queryRows<{ n: number }>(
          database?.handle.db ?? ({} as never),
          sql`select count(*)::int as n from unnest(${`{${references.join(",")}}`}::text[]) as r(reference)
              where not exists (select 1 from transactions t where t.reference = r.reference and t.status in ('successful', 'failed'))`,
        ).then(([row]) => row?.n ?? -1);
      await waitUntil(async () => (await unfinished()) === 0, {
        what: "every accepted vend final",
        timeoutMs: 30_000,
        intervalMs: 250,
      });
      const books = await summarise(database.handle);
      expect(books).toMatchObject({
        transactions: references.length,
        final: references.length,
        notFinal: 0,
        maxVendCount: 1,
        ordersAtProvider: references.length,
        captures: references.length,
        releases: 0,
        maxSettlementsPerTransaction: 1,
        heldKobo: 0,
      });
      expect(new Set(references).size).toBe(references.length);
      expect(await reconcileWallets(database.handle.db)).toEqual([]);
      step("books checked");
      await haproxy.stop("SIGTERM");
    },
    processTestMs,
  );
});
