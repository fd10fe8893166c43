import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Config } from "../../src/config.ts";
import { queryRows } from "../../src/db/rows.ts";
import { randomBase62 } from "../../src/lib/random.ts";
import { loadConfig } from "../../src/load-config.ts";
import { unauthenticatedPerMinute } from "../../src/request-logs/recorder.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import { asServiceRole } from "../helpers/database.ts";
import { HttpClient } from "../helpers/http.ts";
import { captureLogs, startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * The request log under overload and failure, over real sockets on a real database: the buffer forced to 5
 * records while the database cannot take them, a database that refuses the insert, a flood of unknown keys. No
 * request is slowed or failed; every record not written is counted (`/metrics`), and said in one warning.
 */
const postgres = Boolean(process.env.DATABASE_URL);
const defaults = loadConfig({});
const withMetrics = { operations: { ...defaults.operations, metricsEnabled: true } } satisfies Partial<Config>;
const requests = 300;
// Ten at a time: three servers of this file at once stay well inside the database's connections beside the other files.
const concurrency = 10;

let small: TestServer;
let normal: TestServer;
let off: TestServer;

beforeAll(async () => {
  // On PostgreSQL the table is locked while requests arrive, so a write waits in the database; the embedded
  // database has one connection (a lock held there would hold every request), so its writes wait for a timer
  // that does not come during the burst.
  small = await startTestServer({
    ...withMetrics,
    requestLogs: { ...defaults.requestLogs, bufferRows: 5, flushMs: postgres ? 20 : 600_000 },
  });
  normal = await startTestServer(withMetrics);
  off = await startTestServer({ ...withMetrics, requestLogs: { ...defaults.requestLogs, enabled: false } });
});
afterAll(async () => {
  await Promise.all([small, normal, off].map((server) => server?.close()));
});

/** The process's request-log counters, as scraped from `/metrics`. */
async function counters(server: TestServer) {
  const text = (await server.anonymous.get("/metrics")).text;
  const value = (series: string) =>
    Number(
      text
        .split("\n")
        .find((line) => line.startsWith(`${series} `))
        ?.split(" ")[1] ?? 0,
    );
  const dropped = {
    buffer_full: value('vend_request_logs_dropped_total{reason="buffer_full"}'),
    write_failed: value('vend_request_logs_dropped_total{reason="write_failed"}'),
    unauthenticated: value('vend_request_logs_dropped_total{reason="unauthenticated"}'),
  };
  return {
    written: value("vend_request_logs_written_total"),
    dropped,
    droppedTotal: dropped.buffer_full + dropped.write_failed + dropped.unauthenticated,
  };
}

const rows = async (server: TestServer) =>
  (await queryRows<{ n: number }>(server.database.handle.db, sql`select count(*)::int as n from request_logs`))[0]?.n ?? -1;

/** `count` requests, `concurrency` at a time; each one's status and latency (ms). */
async function burst(count: number, send: () => Promise<{ status: number }>) {
  const statuses: number[] = [];
  const latencies: number[] = [];
  for (let sent = 0; sent < count; sent += concurrency) {
    await Promise.all(
      Array.from({ length: Math.min(concurrency, count - sent) }, async () => {
        const started = performance.now();
        statuses.push((await send()).status);
        latencies.push(performance.now() - started);
      }),
    );
  }
  return { statuses, latencies };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

describe("a full buffer", () => {
  test(`${requests} requests with a buffer of 5 and the writes held up: each answered normally, as fast as with recording off; every record not written counted, one warning`, async () => {
    const { client } = await fundedAccount(small, 1_000_000, "overloaded");
    const { client: offClient } = await fundedAccount(off, 1_000_000, "unrecorded");
    await small.deps.requestLogs.flush();
    const recordedBefore = await rows(small);
    const before = await counters(small);
    const logs = captureLogs(small, "warn");
    const wallet = () => client.get("/api/v1/wallet");

    const heldBurst = async () => {
      if (!postgres) return burst(requests, wallet);
      // The table locked: the first batch waits in the database for the lock, the buffer fills behind it.
      return small.database.handle.db.transaction(async (tx) => {
        await tx.execute(sql`lock table request_logs in exclusive mode`);
        const answeredMeanwhile = await burst(requests, wallet);
        // Every request was answered while a batch waited in the database for the table.
        const waiting = await queryRows<{ n: number }>(
          small.database.handle.db,
          sql`select count(*)::int as n from pg_stat_activity
                where datname = current_database() and wait_event_type = 'Lock' and query like '%request_logs.insert_logs%'`,
        );
        expect(waiting[0]?.n).toBe(1);
        return answeredMeanwhile;
      });
    };
    const held = await heldBurst();
    expect(held.statuses.filter((status) => status !== 200)).toEqual([]);
    expect(held.statuses).toHaveLength(requests);

    // Recording off, in the same test, in short rounds interleaved with overloaded ones (the side going first flips
    // each round, so both meet the same load from elsewhere): medians compared, generously.
    const onLatencies: number[] = [];
    const offLatencies: number[] = [];
    for (let round = 0; round < 10; round++) {
      const sides = [
        async () => offLatencies.push(...(await burst(concurrency, () => offClient.get("/api/v1/wallet"))).latencies),
        async () => onLatencies.push(...(await burst(concurrency, wallet)).latencies),
      ];
      for (const side of round % 2 === 0 ? sides : sides.reverse()) await side();
    }
    console.log(
      `median latency: recording with a full buffer ${median(onLatencies).toFixed(1)} ms, off ${median(offLatencies).toFixed(1)} ms`,
    );
    expect(median(onLatencies)).toBeLessThan(median(offLatencies) * 1.5 + 5);
    // REQUEST_LOGS_ENABLED=false: nothing was recorded there.
    await off.deps.requestLogs.flush();
    expect(await rows(off)).toBe(0);

    await small.deps.requestLogs.flush();
    const after = await counters(small);
    const written = (await rows(small)) - recordedBefore;
    const answered = requests + 10 * concurrency;
    expect(after.written - before.written).toBe(written);
    expect(after.droppedTotal - before.droppedTotal).toBe(answered - written);
    expect(after.dropped.buffer_full - before.dropped.buffer_full).toBe(answered - written);
    // While the writes were held up, at most two buffers' worth (one waiting in the database, one behind it) were kept.
    expect(written).toBeGreaterThanOrEqual(5);
    expect(after.dropped.buffer_full - before.dropped.buffer_full).toBeGreaterThanOrEqual(requests - 10);

    const warnings = await waitUntil(
      () => {
        const found = logs.lines.map((line) => JSON.parse(line)).filter((line) => line.msg === "request logs dropped");
        return found.length > 0 && found;
      },
      { what: "the warning", timeoutMs: 5000 },
    );
    logs.restore();
    expect(warnings).toHaveLength(1);
    expect(warnings[0].level).toBe(40);
    expect(warnings[0].dropped).toBeGreaterThan(0);
    expect(warnings[0].by_reason.buffer_full).toBe(warnings[0].dropped);
  }, 120_000);
});

describe("a database that refuses the insert", () => {
  test("no request fails; the batches are counted as write_failed, and writing resumes once it accepts again", async () => {
    const { client } = await fundedAccount(normal, 1_000_000, "refused");
    await normal.deps.requestLogs.flush();
    const owner = normal.database.handle.db;
    const serviceRole = normal.database.url ? new URL(asServiceRole(normal.database.url)).username : undefined;
    const before = await counters(normal);
    const recordedBefore = await rows(normal);
    const logs = captureLogs(normal, "warn");
    // The service's role may no longer insert (on the embedded database, one role: the table is not where it was).
    if (serviceRole) await owner.execute(sql.raw(`revoke insert on request_logs from ${serviceRole}`));
    else await owner.execute(sql`alter table request_logs rename to request_logs_away`);
    try {
      const refused = await burst(50, () => client.get("/api/v1/wallet"));
      expect(refused.statuses.filter((status) => status !== 200)).toEqual([]);
      await normal.deps.requestLogs.flush();
    } finally {
      if (serviceRole) await owner.execute(sql.raw(`grant insert on request_logs to ${serviceRole}`));
      else await owner.execute(sql`alter table request_logs_away rename to request_logs`);
    }
    const after = await counters(normal);
    expect(await rows(normal)).toBe(recordedBefore);
    expect(after.dropped.write_failed - before.dropped.write_failed).toBe(50);
    const warning = await waitUntil(
      () => logs.lines.map((line) => JSON.parse(line)).find((line) => line.msg === "request logs dropped"),
      { what: "the warning", timeoutMs: 5000 },
    );
    logs.restore();
    expect(warning).toMatchObject({ dropped: 50, by_reason: { write_failed: 50 } });
    expect(JSON.stringify(warning.err)).toMatch(/permission denied|does not exist/);

    expect((await client.get("/api/v1/wallet")).status).toBe(200);
    await normal.deps.requestLogs.flush();
    expect(await rows(normal)).toBe(recordedBefore + 1);
  });
});

describe("requests without a recognised credential", () => {
  test(`unknown keys from one address: ${unauthenticatedPerMinute} recorded a minute, the rest counted as dropped`, async () => {
    await normal.deps.requestLogs.flush();
    const before = await counters(normal);
    const recordedBefore = await rows(normal);
    const flood = await burst(100, () => new HttpClient(normal.url, `rg_test_${randomBase62(40)}`).get("/api/v1/wallet"));
    expect(flood.statuses.filter((status) => status !== 401)).toEqual([]);
    await normal.deps.requestLogs.flush();
    const recorded = await queryRows<{ n: number }>(
      normal.database.handle.db,
      sql`select count(*)::int as n from request_logs where status = 401 and account_id is null`,
    );
    expect((await rows(normal)) - recordedBefore).toBe(unauthenticatedPerMinute);
    expect(recorded[0]?.n).toBe(unauthenticatedPerMinute);
    const after = await counters(normal);
    expect(after.dropped.unauthenticated - before.dropped.unauthenticated).toBe(100 - unauthenticatedPerMinute);
    // A recognised key from the same address is recorded still.
    const { client } = await fundedAccount(normal, 0, "after-the-flood");
    expect((await client.get("/api/v1/wallet")).status).toBe(200);
    await normal.deps.requestLogs.flush();
    expect(
      (
        await queryRows<{ n: number }>(
          normal.database.handle.db,
          sql`select count(*)::int as n from request_logs where route = '/api/v1/wallet' and status = 200`,
        )
      )[0]?.n,
    ).toBeGreaterThanOrEqual(1);
  });
});
