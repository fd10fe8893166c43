/**
 * What the access log costs (issue 11, item 5). Run by hand against PostgreSQL:
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/access-log.ts
 * Spawns the real API (no worker, so background processing does not compete) twice, each on its own
 * database: one at LOG_LEVEL=info, one at LOG_LEVEL=error. Rounds alternate between them, each
 * driving POST /api/v1/vend with 64 connections; prints min/median/max accepts/s for each and the
 * ratio info/error (target ≥ 0.97). After stopping with SIGTERM it counts the access lines the info
 * server wrote against the requests it answered, so a lost line shows. Server CPU per request (from
 * /proc) is printed too.
 * BENCH_LOG_SINK: where the info server's stdout goes: `file` (default, a temporary file), `pipe`
 * (read and discarded by this process, like a log collector) or `null` (/dev/null).
 * BENCH_PROFILE=1: both servers run under Bun's CPU profiler, and the share of their sampled CPU spent
 * logging (a stack through logResponse, pino or sonic-boom) is printed: the log's cost without the noise
 * of whatever else the machine runs.
 * BENCH_ROUNDS (default 5), BENCH_SECONDS per round (default 5). Other variables of this process pass
 * through to both servers.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { createTestDatabase, dropAllTestDatabases, type TestDatabase } from "../test/helpers/database.ts";
import { childEnv } from "../test/helpers/process.ts";

const concurrency = 64;
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const roundMs = Number(process.env.BENCH_SECONDS ?? 5) * 1000;
const sink = (process.env.BENCH_LOG_SINK ?? "file") as "file" | "pipe" | "null";
const profile = process.env.BENCH_PROFILE === "1";
const poolSize = 20;
const adminToken = "bench-admin-token-0123456789abcdef";

if (!process.env.DATABASE_URL) {
  console.error("Set DATABASE_URL to a PostgreSQL server (the bench creates and drops its own databases).");
  process.exit(2);
}
if (!["file", "pipe", "null"].includes(sink)) {
  console.error("BENCH_LOG_SINK must be file, pipe or null");
  process.exit(2);
}

interface Server {
  label: string;
  proc: Subprocess;
  base: string;
  auth: Record<string, string>;
  /** Vend requests answered (any status), warm-up included. */
  answered: number;
  /** Requests that got no answer (a broken connection). */
  failed: number;
  /** Access lines of vend requests in its stdout so far (counted for the `file` sink only). */
  accessLines(): number;
  rates: number[];
  /** Server CPU time per answered request in each round, µs. */
  cpuPerRequest: number[];
}

const directory = mkdtempSync(join(tmpdir(), "access-log-bench-"));
const databases: TestDatabase[] = [];
const servers: Server[] = [];

/** A port free right now (the server is told to listen on it, so its stdout need not be read). */
function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port ?? 0;
  probe.stop(true);
  return port;
}

async function startServer(label: string, logLevel: string): Promise<Server> {
  const database = await createTestDatabase({ maxConnections: 1 });
  databases.push(database);
  const file = join(directory, `${label}.log`);
  const port = freePort();
  const target = sink === "file" || logLevel !== "info" ? Bun.file(file) : sink === "pipe" ? "pipe" : "ignore";
  const profiling = profile ? ["--cpu-prof", `--cpu-prof-dir=${directory}`, `--cpu-prof-name=${label}.cpuprofile`] : [];
  const proc = Bun.spawn([process.execPath, ...profiling, join(import.meta.dir, "../src/main.ts"), "serve"], {
    env: childEnv({
      DATABASE_URL: database.url,
      PORT: String(port),
      HOST: "127.0.0.1",
      ADMIN_TOKEN: adminToken,
      RATE_LIMIT_PER_MINUTE: "0",
      DATABASE_POOL_SIZE: String(poolSize),
      LOG_LEVEL: logLevel,
    }) as Record<string, string>,
    stdout: target,
    stderr: Bun.file(join(directory, `${label}.err`)),
    stdin: "ignore",
  });
  if (target === "pipe" && proc.stdout instanceof ReadableStream) {
    // Read and dropped as it arrives, as a log collector would forward it.
    const reader = proc.stdout.getReader();
    void (async () => {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read());
    })();
  }
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const up = await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline || proc.exitCode !== null) {
      const stderr = await Bun.file(join(directory, `${label}.err`))
        .text()
        .catch(() => "");
      throw new Error(`${label} server did not start:\n${stderr}`);
    }
    await Bun.sleep(50);
  }
  const created = await fetch(`${base}/admin/v1/accounts`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "bench" }),
  }).then((r) => r.json());
  const testKey: string = created.data.keys.find((k: { mode: string }) => k.mode === "test").key;
  const auth = { authorization: `Bearer ${testKey}`, "content-type": "application/json" };
  await fetch(`${base}/api/v1/wallet/fund`, {
    method: "POST",
    headers: { ...auth, "idempotency-key": "bench-fund" },
    body: JSON.stringify({ amount_kobo: 90_000_000_000 }),
  });
  const accessLines = () =>
    sink === "file"
      ? readFileSync(file, "utf8")
          .split("\n")
          .filter((l) => l.includes('"route":"/api/v1/vend"')).length
      : 0;
  return { label, proc, base, auth, answered: 0, failed: 0, accessLines, rates: [], cpuPerRequest: [] };
}

const body = JSON.stringify({ product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 });

async function round(server: Server, durationMs: number): Promise<number> {
  const cpuBefore = cpuMs(server.proc.pid);
  const deadline = performance.now() + durationMs;
  let accepted = 0;
  let answered = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        try {
          const res = await fetch(`${server.base}/api/v1/vend`, {
            method: "POST",
            headers: { ...server.auth, "idempotency-key": randomUUID() },
            body,
          });
          await res.arrayBuffer();
          answered += 1;
          if (res.status === 202) accepted += 1;
        } catch {
          server.failed += 1;
        }
      }
    }),
  );
  server.answered += answered;
  server.cpuPerRequest.push(((cpuMs(server.proc.pid) - cpuBefore) * 1000) / Math.max(1, answered));
  return accepted / (durationMs / 1000);
}

/** The process's CPU time so far (user + system), in ms, from /proc (Linux). */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  samples: number[];
}

/** Share of a server's CPU samples whose stack passes through the logging code. */
function loggingShare(label: string): number {
  const { nodes, samples } = JSON.parse(readFileSync(join(directory, `${label}.cpuprofile`), "utf8")) as CpuProfile;
  const parent = new Map<number, number>();
  for (const node of nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const logging = new Map<number, boolean>();
  const isLogging = (id: number): boolean => {
    const known = logging.get(id);
    if (known !== undefined) return known;
    const frame = byId.get(id)?.callFrame;
    const own =
      frame !== undefined && (frame.functionName === "logResponse" || /\/node_modules\/(pino|sonic-boom)\//.test(frame.url));
    const up = parent.get(id);
    const result = own || (up !== undefined && isLogging(up));
    logging.set(id, result);
    return result;
  };
  const idle = new Set(nodes.filter((n) => ["(idle)", "(program)"].includes(n.callFrame.functionName)).map((n) => n.id));
  const busy = samples.filter((id) => !idle.has(id));
  return busy.filter(isLogging).length / Math.max(1, busy.length);
}

let cleaning: Promise<void> | undefined;
/** Stops both servers and drops every database this run created (the template too); once, whoever asks first. */
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    for (const server of servers) {
      if (server.proc.exitCode === null) server.proc.kill("SIGKILL");
      await server.proc.exited;
    }
    for (const database of databases) await database.drop().catch(() => {});
    await dropAllTestDatabases();
    rmSync(directory, { recursive: true, force: true });
  })();
  return cleaning;
}
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => {
    console.error(`\n${signal}: cleaning up`);
    void cleanUp().finally(() => process.exit(130));
  });

const stats = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { min: sorted[0] ?? 0, median: sorted[Math.floor(sorted.length / 2)] ?? 0, max: sorted.at(-1) ?? 0 };
};

try {
  const info = await startServer("info", "info");
  servers.push(info);
  const error = await startServer("error", "error");
  servers.push(error);
  // Warm-up (JIT, connection pools, caches), not counted.
  for (const server of servers) {
    await round(server, 2000);
    server.cpuPerRequest = [];
  }
  for (let n = 0; n < rounds; n++) {
    // Alternate which goes first, so a drift in machine load falls on both.
    const order = n % 2 === 0 ? [info, error] : [error, info];
    for (const server of order) server.rates.push(await round(server, roundMs));
  }
  console.log(`access-log bench: ${rounds} rounds × ${roundMs / 1000} s, ${concurrency} connections, info stdout → ${sink}`);
  for (const server of servers) {
    const { min, median, max } = stats(server.rates);
    const cpu = stats(server.cpuPerRequest);
    console.log(
      `LOG_LEVEL=${server.label.padEnd(5)}  accepts/s  min ${min.toFixed(0).padStart(6)}  median ${median.toFixed(0).padStart(6)}  max ${max.toFixed(0).padStart(6)}` +
        `   server CPU µs/request  min ${cpu.min.toFixed(0)}  median ${cpu.median.toFixed(0)}  max ${cpu.max.toFixed(0)}`,
    );
  }
  const ratios = info.rates.map((rate, i) => rate / (error.rates[i] ?? rate));
  const r = stats(ratios);
  const medianRatio = stats(info.rates).median / stats(error.rates).median;
  console.log(
    `ratio info/error (accepts/s) per round  min ${r.min.toFixed(2)}  median ${r.median.toFixed(2)}  max ${r.max.toFixed(2)};  of medians ${medianRatio.toFixed(2)}  (target ≥ 0.97)`,
  );
  const cpuRatios = info.cpuPerRequest.map((cpu, i) => cpu / (error.cpuPerRequest[i] ?? cpu));
  const c = stats(cpuRatios);
  console.log(
    `server CPU per request info/error per round  min ${c.min.toFixed(2)}  median ${c.median.toFixed(2)}  max ${c.max.toFixed(2)}  (what the log costs the server, less sensitive to other load on the machine)`,
  );
  // Stop both the way an operator does; every answered request's line must be written by then.
  for (const server of servers) {
    server.proc.kill("SIGTERM");
    await server.proc.exited;
  }
  if (profile)
    for (const server of servers)
      console.log(
        `LOG_LEVEL=${server.label}: ${(loggingShare(server.label) * 100).toFixed(2)}% of the server's busy CPU samples in logging`,
      );
  if (sink === "file") {
    console.log(
      `info server: ${info.answered} vend requests answered, ${info.accessLines()} access lines for them after SIGTERM`,
    );
  }
  for (const server of servers)
    if (server.failed > 0) console.log(`${server.label}: ${server.failed} requests without an answer`);
} finally {
  await cleanUp();
}
process.exit();
