/**
 * What recording every request costs (issue 46): vend accept throughput with the request log on / off, and the
 * disk one recorded request takes. Run by hand against PostgreSQL:
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/request-logs.ts
 *
 * Subject and anchor are the same service (`src/main.ts serve`, LOG_LEVEL=error, no worker) on databases of
 * their own: REQUEST_LOGS_ENABLED=true (the default settings: batches every 200 ms) and =false. Each takes
 * `POST /api/v1/vend` over HTTP from BENCH_CONCURRENCY connections (64) spread over BENCH_ACCOUNTS funded
 * accounts (200), a new Idempotency-Key per request, as bench/vend-accept.ts drives it. Rounds interleave (the
 * side going first flips every round, after one warm-up round); prints min / median / max accepts/s, the
 * per-round ratio on / off (target ≥ 0.95), the WAL each accept wrote on either side, the CPU each accept cost
 * the API process and the database backends serving it (bench/lib/cpu.ts; off / on is the throughput ratio of a
 * CPU-bound machine, steadier than the rates where other work shares the cores), and then, on the side
 * that recorded, its records against the requests it answered and the table's size per record
 * (`pg_total_relation_size('request_logs')` / rows, after a CHECKPOINT and VACUUM; its heap and its three
 * indexes apart). This machine runs PostgreSQL with autovacuum off; the bench says what it finds. Last, the
 * recorder alone in the bench's own process (BENCH_RECORDS vend records, 20,000): its CPU per record and its
 * backends', against an accept's CPU with recording off: the steadiest figure where the cores are shared.
 * Env: BENCH_SECONDS (per side per round, 3), BENCH_ROUNDS (5), BENCH_CONCURRENCY (64), BENCH_ACCOUNTS (200),
 * BENCH_POOL_SIZE (the service's DATABASE_POOL_SIZE, 10), BENCH_FLUSH_MS (the recording side's REQUEST_LOGS_FLUSH_MS,
 * its default unless set), BENCH_RECORDS (20,000).
 */
import type postgres from "postgres";
import { openDatabase } from "../src/db/client.ts";
import type { AnsweredRequest } from "../src/lib/answered-request.ts";
import { createLogger } from "../src/logger.ts";
import { RequestLogRecorder } from "../src/request-logs/recorder.ts";
import { benchAdminToken, fundedAccounts, vendTargets } from "./lib/accounts.ts";
import { envNumber, onCleanup, requirePostgres, runBench } from "./lib/cleanup.ts";
import { cpuBetween, sampleCpu } from "./lib/cpu.ts";
import { benchClient, serviceDatabase } from "./lib/databases.ts";
import { closedLoop, type Target } from "./lib/load.ts";
import { apiUrl, type BenchProcess, startService } from "./lib/processes.ts";
import { printFigure, printRatio, spread } from "./lib/stats.ts";

const seconds = envNumber("BENCH_SECONDS", 3);
const rounds = envNumber("BENCH_ROUNDS", 5);
const concurrency = envNumber("BENCH_CONCURRENCY", 64);
const accountCount = envNumber("BENCH_ACCOUNTS", 200);
const poolSize = envNumber("BENCH_POOL_SIZE", 10);

const recorderRecords = envNumber("BENCH_RECORDS", 20_000);

interface Side {
  label: string;
  database: string;
  api: BenchProcess;
  owner: postgres.Sql;
  targets: Target[];
  /** Requests the side answered that it records: the set-up's (accounts, funding) and every accept. */
  answered: number;
  rates: number[];
  walPerAccept: number[];
  /** CPU µs per accept of the API process and of the database backends serving it. */
  apiCpu: number[];
  backendCpu: number[];
}

async function startSide(server: string, label: string, enabled: boolean): Promise<Side> {
  const database = await serviceDatabase(server);
  const api = startService(database, "api", {
    ADMIN_TOKEN: benchAdminToken,
    DATABASE_POOL_SIZE: String(poolSize),
    REQUEST_LOGS_ENABLED: String(enabled),
    ...(process.env.BENCH_FLUSH_MS ? { REQUEST_LOGS_FLUSH_MS: process.env.BENCH_FLUSH_MS } : {}),
  });
  const base = await apiUrl(api);
  const keys = await fundedAccounts(base, accountCount, 100_000_000_000);
  return {
    label,
    database,
    api,
    owner: benchClient(database),
    targets: vendTargets(base, keys),
    // An account's creation and one funding request each (the largest funding step covers the amount).
    answered: 2 * accountCount,
    rates: [],
    walPerAccept: [],
    apiCpu: [],
    backendCpu: [],
  };
}

const walPosition = async (sql: postgres.Sql) =>
  (await sql<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`)[0]?.lsn ?? "0/0";

async function walSince(sql: postgres.Sql, from: string): Promise<number> {
  const [row] = await sql<{ bytes: string }[]>`select pg_wal_lsn_diff(pg_current_wal_lsn(), ${from}::pg_lsn)::text as bytes`;
  return Number(row?.bytes ?? 0);
}

async function runRound(side: Side, keep: boolean, serverPort: number): Promise<string> {
  const from = await walPosition(side.owner);
  const cpuBefore = await sampleCpu(side.owner, side.api.proc.pid, serverPort);
  const result = await closedLoop(side.targets, concurrency, seconds);
  // The records of the round's last 200 ms are written after it: its WAL and CPU are read once they are.
  await Bun.sleep(400);
  const wal = await walSince(side.owner, from);
  const cpu = cpuBetween(cpuBefore, await sampleCpu(side.owner, side.api.proc.pid, serverPort));
  if (result.failed > 0) console.log(`  ${side.label}: ${result.failed} failed, e.g. ${result.failures.join(" | ")}`);
  side.answered += result.ok + result.failed;
  if (keep) {
    side.rates.push(result.perSecond);
    side.walPerAccept.push(wal / Math.max(1, result.ok));
    side.apiCpu.push((cpu.process * 1000) / Math.max(1, result.ok));
    side.backendCpu.push((cpu.backends * 1000) / Math.max(1, result.ok));
  }
  return `${side.label} ${result.perSecond.toFixed(0)}/s`;
}

async function recordedFigures(side: Side) {
  await Bun.sleep(500);
  await side.owner`checkpoint`;
  await side.owner.unsafe("vacuum (analyze) request_logs");
  const [row] = await side.owner<
    { rows: string; total: string; heap: string; indexes: string; toast: string; row_bytes: string; bodies: string }[]
  >`
    select (select count(*) from request_logs)::text as rows,
      pg_total_relation_size('request_logs')::text as total,
      pg_relation_size('request_logs')::text as heap,
      pg_indexes_size('request_logs')::text as indexes,
      coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0)::text as toast,
      (select avg(pg_column_size(r.*)) from request_logs r)::text as row_bytes,
      (select avg(octet_length(coalesce(request_body, '')) + octet_length(coalesce(response_body, ''))) from request_logs)::text as bodies
    from pg_class c where c.oid = 'request_logs'::regclass`;
  const [autovacuum] = await side.owner<{ setting: string }[]>`select setting from pg_settings where name = 'autovacuum'`;
  return {
    rows: Number(row?.rows ?? 0),
    total: Number(row?.total ?? 0),
    heap: Number(row?.heap ?? 0),
    indexes: Number(row?.indexes ?? 0),
    toast: Number(row?.toast ?? 0),
    rowBytes: Number(row?.row_bytes ?? 0),
    bodies: Number(row?.bodies ?? 0),
    autovacuum: autovacuum?.setting ?? "unknown",
  };
}

/**
 * The recorder alone, in this process, on the recording side's database: `recorderRecords` records of an accepted
 * vend (its real request and answer) recorded and written as the service does (batches of 500 by COPY, redaction
 * at the write). Its CPU per record, this process's and the backends' serving it, is the recording's cost per
 * request, apart from everything else an accept does and from what else runs on the machine.
 */
async function recorderAlone(side: Side, serverPort: number) {
  const vend = side.targets[0];
  if (!vend) throw new Error("no target");
  const answer = await fetch(vend.url, {
    method: "POST",
    headers: { ...vend.headers, "idempotency-key": `bench-recorder-${Date.now()}` },
    body: vend.body,
  });
  const responseBody = await answer.text();
  const handle = await openDatabase({ databaseUrl: side.database, maxConnections: 2 });
  onCleanup("close the recorder's pool", () => handle.close());
  const metrics = { requestLogsWritten() {}, requestLogsDropped() {} };
  const logger = createLogger("error");
  const secrets = [benchAdminToken];
  const recorderDeps = { db: handle.db, logger, metrics, secrets: () => secrets, clientSubject: (address: string) => address };
  const recorder = new RequestLogRecorder(() => recorderDeps, {
    enabled: true,
    bufferRows: recorderRecords,
    flushMs: 200,
    bodyBytes: 16_384,
  });
  const answered = (n: number): AnsweredRequest => ({
    arrivedAt: Date.now(),
    requestId: `req_bench${n.toString(36).padStart(16, "0")}`,
    accountId: "7a1c2f4e-5b6d-4e8f-9a0b-1c2d3e4f5a6b",
    mode: "test",
    keyId: "0b5e8c1a-2d3f-4a6b-8c9d-0e1f2a3b4c5d",
    keyPrefix: "rg_test_AbCd",
    operator: undefined,
    method: "POST",
    route: "/api/v1/vend",
    url: vend.url,
    status: 202,
    errorCode: undefined,
    idempotencyKey: `bench-${n}`,
    idempotentReplayed: false,
    durationMs: 3.2,
    clientIp: "127.0.0.1",
    userAgent: "Bun/1.4.5",
    // Distinct strings, as each request's are: the same string again would flatter the redaction's scans.
    requestBody: vend.body.replace("10000", String(10_000 + (n % 1000))),
    responseBody: responseBody.replace(/"reference":"[^"]+"/, `"reference":"txn_${n}"`),
  });
  // A first pass not measured: the code is compiled by then, as in a process that has served for a while.
  for (let n = 0; n < recorderRecords / 4; n++) recorder.record(answered(recorderRecords + n));
  await recorder.flush();
  const requests = Array.from({ length: recorderRecords }, (_, n) => answered(n));
  const cpuBefore = await sampleCpu(side.owner, process.pid, serverPort);
  const processBefore = process.cpuUsage();
  for (const request of requests) recorder.record(request);
  await recorder.flush();
  const processUs = process.cpuUsage(processBefore);
  const backends = cpuBetween(cpuBefore, await sampleCpu(side.owner, process.pid, serverPort)).backends;
  return {
    processPerRecord: (processUs.user + processUs.system) / recorderRecords,
    backendsPerRecord: (backends * 1000) / recorderRecords,
  };
}

await runBench(async () => {
  const server = requirePostgres();
  const serverPort = Number(new URL(server).port || 5432);
  const on = await startSide(server, "request logs on", true);
  const off = await startSide(server, "request logs off", false);
  const sides = [on, off];

  console.log(
    `${concurrency} connections over ${accountCount} accounts, pool ${poolSize}, ${seconds} s per side, ${rounds} rounds (+ 1 warm-up); accepts/s`,
  );
  for (let round = 0; round <= rounds; round++) {
    const order = round % 2 === 1 ? [...sides].reverse() : sides;
    const line: string[] = [];
    for (const side of order) line.push(await runRound(side, round > 0, serverPort));
    console.log(`${round === 0 ? "warm-up" : `round ${round}`}: ${line.join(", ")}`);
  }

  console.log(`\n${"accepts/s".padEnd(40)} ${"min / median / max".padStart(22)}`);
  for (const side of sides) printFigure(side.label, side.rates, "/s");
  for (const side of sides) printFigure(`WAL per accept, ${side.label.replace("request logs ", "")}`, side.walPerAccept, "bytes");
  for (const side of sides) printFigure(`API CPU per accept, ${side.label.replace("request logs ", "")}`, side.apiCpu, "µs");
  for (const side of sides)
    printFigure(`its backends' CPU per accept, ${side.label.replace("request logs ", "")}`, side.backendCpu, "µs");
  console.log("");
  printRatio("request logs on / off", on.rates, off.rates, "≥ 0.95");
  // Where the machine is shared (other work on its cores moves the rates), the CPU an accept costs is steadier:
  // off's CPU per accept over on's is the throughput ratio a CPU-bound machine would see.
  const cpuOf = (side: Side) => side.apiCpu.map((api, i) => api + (side.backendCpu[i] ?? 0));
  printRatio("CPU per accept, off / on (API process and its backends)", cpuOf(off), cpuOf(on), "≥ 0.95");

  const figures = await recordedFigures(on);
  const perRecord = (bytes: number) => (figures.rows > 0 ? bytes / figures.rows : Number.NaN);
  console.log(
    `\nrecorded ${figures.rows.toLocaleString("en")} of ${on.answered.toLocaleString("en")} requests answered (the rest dropped)`,
  );
  console.log(
    `disk per recorded request: ${perRecord(figures.total).toFixed(0)} bytes (heap ${perRecord(figures.heap).toFixed(0)}, ` +
      `indexes ${perRecord(figures.indexes).toFixed(0)}, TOAST ${perRecord(figures.toast).toFixed(0)}); ` +
      `a row ${figures.rowBytes.toFixed(0)} bytes, its bodies ${figures.bodies.toFixed(0)} bytes of text`,
  );
  console.log(`autovacuum: ${figures.autovacuum} (the bench ran CHECKPOINT and VACUUM before measuring)`);

  const alone = await recorderAlone(on, serverPort);
  const acceptCpu = (side: Side) => spread(side.apiCpu.map((api, i) => api + (side.backendCpu[i] ?? 0))).median;
  const share = (alone.processPerRecord + alone.backendsPerRecord) / acceptCpu(off);
  console.log(
    `\nthe recorder alone, ${recorderRecords.toLocaleString("en")} vend records: ${alone.processPerRecord.toFixed(1)} µs of process CPU and ` +
      `${alone.backendsPerRecord.toFixed(1)} µs of its backends' per record; an accept with recording off costs ${acceptCpu(off).toFixed(0)} µs ` +
      `(median above): recording adds ${(share * 100).toFixed(1)}%, a CPU-bound ratio on / off of ${(1 / (1 + share)).toFixed(3)}`,
  );
  const ratio = spread(on.rates.map((rate, i) => rate / (off.rates[i] ?? Number.NaN)));
  if (ratio.median < 0.95) console.log(`BELOW TARGET: median ratio ${ratio.median.toFixed(2)} < 0.95`);
});
