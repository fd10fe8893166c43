import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { transactions } from "../../src/db/schema/index.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { loadConfig } from "../../src/load-config.ts";
import { createMetrics } from "../../src/metrics/metrics.ts";
import { startMetricsServer } from "../../src/metrics/metrics-server.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing, sandboxCallback, untilPending } from "../helpers/processing.ts";
import { type Family, observations, parsePrometheusText, total } from "../helpers/prometheus.ts";
import { resyncQueue } from "../helpers/queue.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

const operations = loadConfig({}).operations;
const metricsToken = "metrics-token-0123456789abcdef";
const bearer = { headers: { authorization: `Bearer ${metricsToken}` } };

/** Processes vends and delivers webhooks in the background; `/metrics` behind a token. */
let worked: TestServer;
/** No background work: what is accepted stays queued, so the queue gauges hold still. */
let idle: TestServer;
let receiver: WebhookReceiver;

beforeAll(async () => {
  worked = await startTestServer(fastProcessing({ operations: { ...operations, metricsEnabled: true, metricsToken } }), {
    background: true,
  });
  idle = await startTestServer({ operations: { ...operations, metricsEnabled: true } });
  receiver = startWebhookReceiver();
});
afterAll(async () => {
  await worked?.close();
  await idle?.close();
  await receiver?.close();
});

async function scrape(client: HttpClient, options = {}): Promise<Map<string, Family>> {
  const res = await client.get("/metrics", options);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
  return parsePrometheusText(res.text);
}

/** Scrapes until `done` holds (background work is recorded just after it commits), at most `timeoutMs`. */
function scrapeUntil(client: HttpClient, done: (families: Map<string, Family>) => boolean, what: string) {
  return waitUntil(
    async () => {
      const families = await scrape(client, bearer);
      return done(families) && families;
    },
    { what, intervalMs: 50 },
  );
}

describe("GET /metrics", () => {
  test("with METRICS_TOKEN: 401 without the bearer or with a wrong one, 200 with it", async () => {
    const missing = await worked.anonymous.get("/metrics");
    expect([missing.status, missing.json.code]).toEqual([401, "UNAUTHENTICATED"]);
    const wrong = await worked.anonymous.get("/metrics", { headers: { authorization: "Bearer not-the-metrics-token" } });
    expect([wrong.status, wrong.json.code]).toEqual([401, "UNAUTHENTICATED"]);
    // The admin token is not the metrics token.
    expect((await worked.admin.get("/metrics")).status).toBe(401);
    const families = await scrape(worked.anonymous, bearer);
    expect(families.get("vend_vends_total")?.type).toBe("counter");
    // Scrapes, refused or not, are not traffic: a refused scraper shows as `up == 0` in Prometheus instead.
    expect(families.get("vend_http_requests_total")?.samples.filter((s) => s.labels.operation === "getMetrics")).toEqual([]);
  });

  test("scraping does not count itself: N scrapes leave vend_http_requests_total and its histogram as they were", async () => {
    expect((await idle.anonymous.get("/healthz")).status).toBe(200);
    const before = await scrape(idle.anonymous);
    for (let i = 0; i < 5; i++) await scrape(idle.anonymous);
    const after = await scrape(idle.anonymous);
    const requests = (families: Map<string, Family>) => families.get("vend_http_requests_total")?.samples ?? [];
    // The health check before is there, and nothing was added since.
    expect(total(before, "vend_http_requests_total", { operation: "getHealth", status: "200" })).toBe(1);
    expect(requests(after)).toEqual(requests(before));
    expect(observations(after, "vend_http_request_duration_seconds", { operation: "getMetrics" })).toBe(0);
  });

  test("the process's own metrics (prom-client's defaults) are served, and are sane under Bun", async () => {
    const first = await scrape(idle.anonymous);
    const type = (name: string) => first.get(name)?.type;
    expect({
      cpu: type("process_cpu_user_seconds_total"),
      cpuSystem: type("process_cpu_system_seconds_total"),
      rss: type("process_resident_memory_bytes"),
      fds: type("process_open_fds"),
      maxFds: type("process_max_fds"),
      start: type("process_start_time_seconds"),
      lag: type("nodejs_eventloop_lag_seconds"),
      lagP99: type("nodejs_eventloop_lag_p99_seconds"),
      lagMax: type("nodejs_eventloop_lag_max_seconds"),
      heap: type("nodejs_heap_size_used_bytes"),
    }).toEqual({
      cpu: "counter",
      cpuSystem: "counter",
      rss: "gauge",
      fds: "gauge",
      maxFds: "gauge",
      start: "gauge",
      lag: "gauge",
      lagP99: "gauge",
      lagMax: "gauge",
      heap: "gauge",
    });
    // Always 0 under Bun (no libuv handles, no GC entries): left out rather than shown as a flat line.
    for (const name of ["nodejs_active_handles_total", "nodejs_active_resources_total", "nodejs_gc_duration_seconds"]) {
      expect({ name, exposed: first.has(name) }).toEqual({ name, exposed: false });
    }
    const rss = total(first, "process_resident_memory_bytes");
    expect(rss).toBeGreaterThan(10 * 1024 * 1024);
    expect(rss).toBeLessThan(16 * 1024 * 1024 * 1024);
    const fds = total(first, "process_open_fds");
    expect(fds).toBeGreaterThan(3);
    expect(fds).toBeLessThan(total(first, "process_max_fds"));
    expect(Math.abs(total(first, "process_start_time_seconds") - (Date.now() / 1000 - process.uptime()))).toBeLessThan(5);

    // The server runs in this process: a busy loop of 250 ms of CPU time (at least 500 ms on the clock,
    // on a shared machine maybe more) is CPU time, and a blocked event loop. The delay monitor's timer runs
    // every 200 ms, so it sees at least the block less one period: over 0.25 s.
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const cpuSpent = () => {
      const used = process.cpuUsage(cpuBefore);
      return (used.user + used.system) / 1e6;
    };
    while (performance.now() - started < 500 || cpuSpent() < 0.25) {}
    // The monitor's timer records the delay when it next runs.
    await Bun.sleep(50);
    const second = await scrape(idle.anonymous);
    const cpu = total(second, "process_cpu_seconds_total") - total(first, "process_cpu_seconds_total");
    expect(cpu).toBeGreaterThan(0.2);
    expect(total(second, "nodejs_eventloop_lag_max_seconds")).toBeGreaterThan(0.25);
    expect(total(second, "nodejs_eventloop_lag_max_seconds")).toBeLessThan(30);
  });

  test("requests no route matches are counted as (unmatched)", async () => {
    expect((await worked.anonymous.get("/no-such-route")).status).toBe(404);
    const families = await scrape(worked.anonymous, bearer);
    expect(total(families, "vend_http_requests_total", { operation: "(unmatched)", status: "404" })).toBe(1);
    expect(observations(families, "vend_http_request_duration_seconds", { operation: "(unmatched)" })).toBe(1);
  });

  test("METRICS_ENABLED false: 404 as if there were no such route", async () => {
    const config = idle.deps.config;
    idle.deps.config = { ...config, operations: { ...config.operations, metricsEnabled: false } };
    try {
      const res = await idle.anonymous.get("/metrics");
      expect([res.status, res.json.code]).toEqual([404, "NOT_FOUND"]);
    } finally {
      idle.deps.config = config;
    }
  });

  test("every request, vend, webhook and provider family moves after vends are processed; the books still balance", async () => {
    const { client } = await fundedAccount(worked, 1_000_000);
    const endpoint = await client.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/hooks` });
    expect(endpoint.status).toBe(201);
    const before = await scrape(worked.anonymous, bearer);

    // The first webhook is refused once (retrying), then delivered.
    receiver.failNext(1);
    const vend = (phone: string, key = idem()) =>
      client.post(
        "/api/v1/vend",
        { product_code: "mtn-airtime", phone_number: phone, amount_kobo: 10_000 },
        { ...key, query: { wait: 10 } },
      );
    const replayKey = idem();
    const answers = await Promise.all([vend("08031234567", replayKey), vend("08031231111"), vend("08031235555")]);
    expect(answers.map((a) => [a.status, a.json.data.status])).toEqual([
      [202, "successful"],
      [202, "failed"],
      [202, "successful"],
    ]);
    // 2222: pending at the sandbox, then its signed callback makes it successful.
    const pending = await vend("08031232222");
    expect([pending.status, pending.json.data.status]).toEqual([202, "successful"]);
    // A replay answers 202 again but accepts nothing new.
    const replay = await vend("08031234567", replayKey);
    expect([replay.status, replay.json.data.reference]).toEqual([202, answers[0]?.json.data.reference]);

    await receiver.waitFor(5, 10_000);
    const after = await scrapeUntil(
      worked.anonymous,
      (f) => total(f, "vend_webhook_deliveries_total", { outcome: "delivered" }) >= 4,
      "4 webhook deliveries counted in /metrics",
    );
    const moved = (family: string, labels: Record<string, string> = {}, sample = family) =>
      total(after, family, labels, sample) - total(before, family, labels, sample);
    const observed = (family: string, labels: Record<string, string> = {}) =>
      observations(after, family, labels) - observations(before, family, labels);
    const airtime = { service: "airtime", network: "mtn", provider: "sandbox" };

    expect(moved("vend_http_requests_total", { operation: "vendProduct", status: "202" })).toBe(5);
    expect(observed("vend_http_request_duration_seconds", { operation: "vendProduct" })).toBe(5);
    expect({
      accepted: moved("vend_vends_total", { event: "accepted", ...airtime }),
      successful: moved("vend_vends_total", { event: "successful", ...airtime }),
      failed: moved("vend_vends_total", { event: "failed", ...airtime }),
      // 5555 (no answer) and 2222 (the provider's own pending) went pending once each.
      pending: moved("vend_vends_total", { event: "pending", ...airtime }),
    }).toEqual({ accepted: 4, successful: 3, failed: 1, pending: 2 });
    expect(observed("vend_accept_to_final_seconds", { service: "airtime", status: "successful" })).toBe(3);
    expect(observed("vend_accept_to_final_seconds", { service: "airtime", status: "failed" })).toBe(1);
    expect(observed("vend_provider_request_duration_seconds", { provider: "sandbox", operation: "vend" })).toBe(4);
    expect(observed("vend_provider_request_duration_seconds", { provider: "sandbox", operation: "requery" })).toBeGreaterThan(0);
    expect(moved("vend_provider_errors_total", { provider: "sandbox", kind: "unanswered" })).toBe(1);
    expect({
      delivered: moved("vend_webhook_deliveries_total", { outcome: "delivered" }),
      retrying: moved("vend_webhook_deliveries_total", { outcome: "retrying" }),
    }).toEqual({ delivered: 4, retrying: 1 });
    expect(observed("vend_webhook_delivery_lag_seconds")).toBe(4);

    // Counting changed no money: four holds, three captured, one released, every wallet equal to its ledger.
    const wallet = (await client.get("/api/v1/wallet")).json.data;
    expect(wallet).toMatchObject({ held_kobo: 0, balance_kobo: 1_000_000 - 3 * 9_700 });
    expect(await reconcileWallets(worked.database.handle.db)).toEqual([]);
  }, 30_000);

  test("a callback's completion is counted; pool connections are reported", async () => {
    const { client } = await fundedAccount(worked, 100_000, "callbacks");
    const res = await client.post(
      "/api/v1/vend",
      { product_code: "mtn-airtime", phone_number: "08031234444", amount_kobo: 10_000 },
      idem(),
    );
    expect((await untilPending(client, res.json.data.reference)).status).toBe("pending");
    const before = await scrape(worked.anonymous, bearer);
    const callback = sandboxCallback({
      event_id: "m-1",
      reference: res.json.data.reference,
      status: "failed",
      provider_reference: "M-4444",
    });
    const applied = await worked.anonymous.post("/callbacks/providers/sandbox", undefined, {
      raw: callback.raw,
      headers: callback.headers,
    });
    expect(applied.status).toBe(200);
    const after = await scrape(worked.anonymous, bearer);
    const labels = { event: "failed", service: "airtime", network: "mtn", provider: "sandbox" };
    expect(total(after, "vend_vends_total", labels) - total(before, "vend_vends_total", labels)).toBe(1);
    const max = worked.database.handle.kind === "pglite" ? 1 : 20;
    expect(total(after, "vend_db_pool_connections", { state: "max" })).toBe(max);
    const inUse = after.get("vend_db_pool_connections")?.samples.find((s) => s.labels.state === "in_use");
    expect(inUse?.value).toBeGreaterThanOrEqual(0);
    expect(inUse?.value).toBeLessThanOrEqual(max);
    expect((await client.get("/api/v1/wallet")).json.data.held_kobo).toBe(0);
    expect(await reconcileWallets(worked.database.handle.db)).toEqual([]);
  }, 20_000);

  test("queue depth, oldest due age and stuck orders come from the database at scrape time", async () => {
    const empty = await scrape(idle.anonymous);
    expect([total(empty, "vend_queue_depth"), total(empty, "vend_stuck_transactions")]).toEqual([0, 0]);
    const { client } = await fundedAccount(idle, 100_000);
    const accepted = await client.post(
      "/api/v1/vend",
      { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 },
      idem(),
    );
    expect(accepted.status).toBe(202);
    const db = idle.database.handle.db;
    // Due a minute ago, nobody working: depth 1, oldest due about 60 s.
    await db
      .update(transactions)
      .set({ nextAttemptAt: sql`now() - interval '60 seconds'` })
      .where(eq(transactions.reference, accepted.json.data.reference));
    await resyncQueue(db);
    const queued = await scrape(idle.anonymous);
    expect(total(queued, "vend_queue_depth")).toBe(1);
    expect(total(queued, "vend_queue_oldest_due_age_seconds")).toBeGreaterThanOrEqual(59);
    expect(total(queued, "vend_stuck_transactions")).toBe(0);
    // Pending since before STUCK_AFTER_MINUTES (30): stuck.
    await db
      .update(transactions)
      .set({ status: "pending", createdAt: sql`now() - interval '31 minutes'` })
      .where(eq(transactions.reference, accepted.json.data.reference));
    expect(total(await scrape(idle.anonymous), "vend_stuck_transactions")).toBe(1);
  });

  test("a database that does not answer leaves the queue gauges out, and the scrape still answers", async () => {
    const silent = { execute: () => new Promise(() => {}) } as unknown as typeof idle.deps.db;
    const metrics = createMetrics({
      database: { db: silent, connections: () => ({ inUse: undefined, max: 5 }) },
      stuckAfterMinutes: 30,
      queueQueryTimeoutMs: 100,
    });
    metrics.vendAccepted({ service: "airtime", network: "mtn", provider: "sandbox" });
    const started = performance.now();
    const families = parsePrometheusText(await metrics.scrape());
    metrics.close();
    expect(performance.now() - started).toBeLessThan(2000);
    expect(families.has("vend_queue_depth")).toBe(false);
    expect(families.has("vend_stuck_transactions")).toBe(false);
    expect(total(families, "vend_vends_total", { event: "accepted" })).toBe(1);
    expect(families.get("vend_db_pool_connections")?.samples.map((s) => [s.labels.state, s.value])).toEqual([["max", 5]]);
  });
});

describe("process metrics", () => {
  test("each Metrics collects on its own registry, and close() stops its event-loop monitor", async () => {
    const build = () => createMetrics({ database: idle.database.handle, stuckAfterMinutes: 30 });
    // Two in one process: no "already registered" error, each with its own families.
    const open = build();
    const closed = build();
    try {
      closed.close();
      await Promise.all([open.scrape(), closed.scrape()]);
      const started = performance.now();
      // At least one period (200 ms) of the monitor more than the lag it must see.
      while (performance.now() - started < 400) {}
      await Bun.sleep(50);
      const maxLag = async (metrics: typeof open) =>
        total(parsePrometheusText(await metrics.scrape()), "nodejs_eventloop_lag_max_seconds");
      expect(await maxLag(open)).toBeGreaterThan(0.15);
      // Nothing sampled the blocked loop once closed (0, or NaN with no sample at all).
      const closedMax = await maxLag(closed);
      expect({ closedMax, sampled: closedMax > 0.15 }).toMatchObject({ sampled: false });
    } finally {
      open.close();
    }
  });

  test("with METRICS_ENABLED unset nothing can scrape them: no event-loop monitor wakes the process", async () => {
    // The default configuration: /metrics answers 404, and the server collects no process figures.
    const unscraped = await startTestServer();
    try {
      expect((await unscraped.anonymous.get("/metrics")).status).toBe(404);
      const families = parsePrometheusText(await unscraped.deps.metrics.scrape());
      const processFamilies = [...families.keys()].filter((name) => name.startsWith("nodejs_") || name.startsWith("process_"));
      expect(processFamilies).toEqual([]);
      // The service's own counters are kept as before.
      expect(families.has("vend_http_requests_total")).toBe(true);
    } finally {
      await unscraped.close();
    }
  });
});

describe("worker-only metrics server", () => {
  test("serves /metrics on its own port under the same token rule; nothing else", async () => {
    const metrics = createMetrics({ database: idle.database.handle, stuckAfterMinutes: 30 });
    metrics.vendAccepted({ service: "data", network: "glo", provider: "sandbox" });
    const server = startMetricsServer(metrics, {
      port: 0,
      hostname: "127.0.0.1",
      token: metricsToken,
      logger: idle.deps.logger,
    });
    try {
      expect(server.port).toBeGreaterThan(0);
      const missing = await fetch(`${server.url}/metrics`);
      expect([missing.status, ((await missing.json()) as { code: string }).code]).toEqual([401, "UNAUTHENTICATED"]);
      const wrong = await fetch(`${server.url}/metrics`, { headers: { authorization: "Bearer wrong-token-0123456789" } });
      expect(wrong.status).toBe(401);
      const other = await fetch(`${server.url}/api/v1/wallet`, bearer);
      expect(other.status).toBe(404);
      const res = await fetch(`${server.url}/metrics`, bearer);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
      const families = parsePrometheusText(await res.text());
      expect(total(families, "vend_vends_total", { event: "accepted", service: "data" })).toBe(1);
      expect(families.has("vend_queue_depth")).toBe(true);
      // The process's own metrics, and the scrapes above not counted.
      expect(families.get("process_resident_memory_bytes")?.type).toBe("gauge");
      expect(families.get("nodejs_eventloop_lag_p99_seconds")?.type).toBe("gauge");
      expect(families.get("vend_http_requests_total")?.samples).toEqual([]);
    } finally {
      await server.stop();
      metrics.close();
    }
  });
});
