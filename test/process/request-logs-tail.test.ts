// Runs alone, after the other files: it measures each record's time from its answer to a stream against a 1 s budget.
import { afterEach, describe, expect, test } from "bun:test";
import { apiUrl, spawnService } from "../helpers/cluster.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { type LogStream, openLogStream } from "../helpers/log-stream.ts";
import { processTestMs, type StartedProcess } from "../helpers/process.ts";

// Several processes on one database need a real PostgreSQL server (CI always has one).
const postgres = Boolean(process.env.DATABASE_URL);
const processes: StartedProcess[] = [];
const streams: LogStream[] = [];
let database: TestDatabase | undefined;

afterEach(async () => {
  for (const stream of streams.splice(0)) stream.close();
  await Promise.all(processes.splice(0).map((p) => p.stop("SIGKILL")));
  await database?.drop();
  database = undefined;
});

/** Two API processes on one new database, and the first account's test key (printed by the first start). */
async function twoProcesses() {
  database = await createTestDatabase({ maxConnections: 4 });
  const url = database.url ?? "";
  const first = spawnService(url, "api");
  processes.push(first);
  const firstUrl = await apiUrl(first);
  const [, key] = await first.waitFor(/Test API key \(shown once, store it now\): (rg_test_\w+)/);
  const second = spawnService(url, "api");
  processes.push(second);
  return { first, second, urls: [firstUrl, await apiUrl(second)] as const, key: key ?? "" };
}

async function openOn(baseUrl: string, key: string): Promise<LogStream> {
  const stream = await openLogStream(baseUrl, "/api/v1/request-logs/stream", key);
  streams.push(stream);
  expect(stream.response.status).toBe(200);
  await stream.waitForComment(/^stream of request logs$/);
  return stream;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;

describe.skipIf(!postgres)("request logs across API processes", () => {
  test(
    "200 requests spread over two processes reach a stream held on the second, each process's in its answer order, none missing, each within 1 s of its answer",
    async () => {
      const { urls, key } = await twoProcesses();
      const stream = await openOn(urls[1], key);
      const answered = new Map<string, { process: number; order: number; at: number }>();
      // Each process answers its hundred one after another (so its answer order is the client's sending order);
      // the two run side by side. A quarter are failures (404), as a client's would be.
      const sendHundred = async (process: number) => {
        for (let order = 0; order < 100; order++) {
          const path = order % 4 === 3 ? "/api/v1/transactions/txn_none" : "/api/v1/wallet";
          const response = await fetch(`${urls[process]}${path}`, { headers: { authorization: `Bearer ${key}` } });
          const at = performance.now();
          await response.arrayBuffer();
          expect(response.status).toBe(order % 4 === 3 ? 404 : 200);
          answered.set(response.headers.get("x-request-id") ?? "", { process, order, at });
        }
      };
      await Promise.all([sendHundred(0), sendHundred(1)]);
      const events = await stream.waitForEvents(200, 15_000);
      expect(new Set(events.map((event) => event.data.request_id))).toEqual(new Set(answered.keys()));
      const ids = events.map((event) => Number(event.id));
      expect(ids).toEqual([...ids].sort((x, y) => x - y));
      for (const process of [0, 1]) {
        const own = events.filter((event) => answered.get(event.data.request_id)?.process === process);
        expect(own.map((event) => answered.get(event.data.request_id)?.order)).toEqual([...Array(100).keys()]);
      }
      const latencies = events
        .map((event) => event.receivedAt - (answered.get(event.data.request_id)?.at ?? Number.NaN))
        .sort((x, y) => x - y);
      console.log(
        `answer to stream, ms: median ${percentile(latencies, 50).toFixed(0)}, p95 ${percentile(latencies, 95).toFixed(0)}, max ${latencies.at(-1)?.toFixed(0)}`,
      );
      expect(latencies.at(-1)).toBeLessThan(1000);
      // Nothing else came: the stream's own request is not recorded, nor the other key's (none here).
      expect(stream.events).toHaveLength(200);
    },
    processTestMs,
  );

  test(
    "SIGTERM: the process ends its open streams with a last comment and stops without waiting out its grace period",
    async () => {
      const { second, urls, key } = await twoProcesses();
      const held = await openOn(urls[1], key);
      const other = await openOn(urls[0], key);
      const started = performance.now();
      // Its grace period is 10 s: an open stream would hold the listener's close that long.
      expect(await second.stop("SIGTERM")).toBe(0);
      expect(performance.now() - started).toBeLessThan(5_000);
      await held.waitForComment(/server is shutting down; reconnect with Last-Event-ID/);
      await held.ended;
      expect(second.output()).not.toContain("still in flight");
      // The other process's stream goes on, and the client reconnects there with the last id it has.
      const response = await fetch(`${urls[0]}/api/v1/wallet`, { headers: { authorization: `Bearer ${key}` } });
      expect((await other.waitForEvents(1))[0]?.data.request_id).toBe(response.headers.get("x-request-id") ?? "");
    },
    processTestMs,
  );
});
