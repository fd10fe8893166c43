import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { sql } from "drizzle-orm";
import { queryRows } from "../../src/db/rows.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { loadConfig } from "../../src/load-config.ts";
import { createMetrics } from "../../src/metrics/metrics.ts";
import { startMetricsServer } from "../../src/metrics/metrics-server.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

// A load balancer's health check (HAProxy's default `option httpchk`) is HTTP/1.0 without a Host header;
// clients and scanners send an empty or unparsable one. Bun then gives the request a URL without an origin.
const metricsToken = "scrape-token-0123456789abcdef";
const exported = new InMemorySpanExporter();
let server: TestServer;
let testKey = "";
let accountId = "";

beforeAll(async () => {
  const operations = {
    ...loadConfig({}).operations,
    metricsEnabled: true,
    metricsToken,
    otlpEndpoint: "http://127.0.0.1:4318/v1/traces",
  };
  server = await startTestServer({ operations }, { spanExporter: exported });
  const account = await fundedAccount(server, 1_000_000, "no-host");
  testKey = account.testKey;
  accountId = account.id;
});
afterAll(() => server.close());

interface RawAnswer {
  status: number;
  head: string;
  body: string;
}

/** One exchange over a raw socket, so the request line and headers are exactly these. */
function rawExchange(port: number, request: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    let answer = "";
    const done = () => {
      const split = answer.indexOf("\r\n\r\n");
      const head = split === -1 ? answer : answer.slice(0, split);
      resolve({ status: Number(head.split(" ")[1] ?? 0), head, body: split === -1 ? "" : answer.slice(split + 4) });
    };
    const socket = connect(port, "127.0.0.1", () => socket.write(request));
    socket.on("data", (chunk) => {
      answer += chunk.toString("latin1");
    });
    socket.on("end", done);
    socket.on("close", done);
    socket.on("error", (error) => (answer ? done() : reject(error)));
    socket.setTimeout(10_000, () => socket.destroy());
  });
}

/** Host header lines that leave Bun's request without a parsable origin, and the HTTP/1.0 request with none. */
const hostless: [string, string, string][] = [
  ["HTTP/1.0, no Host", "HTTP/1.0", ""],
  ["empty Host", "HTTP/1.1", "Host: \r\n"],
  ["Host with a space", "HTTP/1.1", "Host: a b\r\n"],
  ["Host with a slash", "HTTP/1.1", "Host: a/b\r\n"],
  ["Host with user info", "HTTP/1.1", "Host: user@h\r\n"],
  ["unclosed IPv6 Host", "HTTP/1.1", "Host: [::1\r\n"],
  ["Host of percent signs", "HTTP/1.1", "Host: %%%\r\n"],
  ["Host with a port out of range", "HTTP/1.1", "Host: h:99999\r\n"],
];

const port = () => Number(new URL(server.url).port);
const request = (version: string, host: string, line: string, headers: string[] = [], body = "") =>
  `${line} ${version}\r\n${host}${[
    ...headers,
    ...(body ? [`Content-Length: ${Buffer.byteLength(body)}`] : []),
    "Connection: close",
  ]
    .map((h) => `${h}\r\n`)
    .join("")}\r\n${body}`;

describe("a request without a usable Host header is answered on every path, never 500", () => {
  test.each(hostless)("%s", async (_name, version, host) => {
    const bearer = `Authorization: Bearer ${testKey}`;
    const vend = JSON.stringify({ product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 });
    const key = `no-host-${Bun.randomUUIDv7()}`;
    const cases: [string, number, string[], string?][] = [
      ["GET /healthz", 200, []],
      ["GET /readyz", 200, []],
      ["GET /docs", 200, []],
      ["GET /openapi.yaml", 200, []],
      [`GET /metrics`, 200, [`Authorization: Bearer ${metricsToken}`]],
      ["GET /api/v1/wallet", 401, []],
      ["GET /api/v1/wallet", 200, [bearer]],
      ["GET /api/v1/transactions?limit=2", 200, [bearer]],
      ["GET /api/v1/transactions?limit=zero", 400, [bearer]],
      ["POST /api/v1/vend", 202, [bearer, "Content-Type: application/json", `Idempotency-Key: ${key}`], vend],
      ["GET /no/such/path", 404, []],
      ["DELETE /healthz", 405, []],
    ];
    const seen: [string, number][] = [];
    for (const [line, , headers, body] of cases) {
      const answer = await rawExchange(port(), request(version, host, line, headers, body));
      seen.push([line, answer.status]);
      // Every answer the app writes carries its request id, errors the envelope.
      expect([line, answer.head.toLowerCase().includes("x-request-id: ")]).toEqual([line, true]);
      if (answer.status >= 400) expect([line, JSON.parse(answer.body).success]).toEqual([line, false]);
    }
    expect(seen).toEqual(cases.map(([line, status]) => [line, status]));
  });

  test("the vends sent without a Host each made one transaction, and the wallets reconcile", async () => {
    const [row] = await queryRows<{ n: number }>(
      server.deps.db,
      sql`select count(*)::int as n from transactions where account_id = ${accountId}::uuid`,
    );
    // One per Host variant above, each under its own key: nothing lost, nothing made twice.
    expect(row?.n).toBe(hostless.length);
    expect(await reconcileWallets(server.deps.db)).toEqual([]);
  });

  test("the request's span records the path, not a broken URL", () => {
    const paths = exported.getFinishedSpans().map((span) => span.attributes["url.path"]);
    expect(paths).toContain("/healthz");
    expect(paths).toContain("/no/such/path");
    expect(paths.filter((path) => typeof path !== "string" || !path.startsWith("/"))).toEqual([]);
  });

  test("HTTP/1.1 without any Host header is refused 400 by the HTTP server itself (RFC 9112 requires it), not 500", async () => {
    const answer = await rawExchange(port(), "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n");
    expect(answer.status).toBe(400);
  });
});

describe("the worker-only metrics server", () => {
  test.each(hostless)("answers /metrics and 404s with %s", async (_name, version, host) => {
    const metrics = createMetrics({ database: server.database.handle, stuckAfterMinutes: 30 });
    const metricsServer = startMetricsServer(metrics, {
      port: 0,
      hostname: "127.0.0.1",
      token: metricsToken,
      logger: server.deps.logger,
    });
    try {
      const scrape = await rawExchange(
        metricsServer.port,
        request(version, host, "GET /metrics", [`Authorization: Bearer ${metricsToken}`]),
      );
      expect(scrape.status).toBe(200);
      expect(scrape.body).toContain("vend_queue_depth");
      const other = await rawExchange(metricsServer.port, request(version, host, "GET /api/v1/wallet"));
      expect([other.status, JSON.parse(other.body).code]).toEqual([404, "NOT_FOUND"]);
    } finally {
      await metricsServer.stop();
      metrics.close();
    }
  });
});
