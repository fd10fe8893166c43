import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { processingRunner } from "../../src/background.ts";
import { webhookEndpoints } from "../../src/db/schema/index.ts";
import { webhookRunner } from "../../src/jobs/queues/delivery-queue.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { loadConfig } from "../../src/load-config.ts";
import { completionBatcher } from "../../src/orders/completion.ts";
import { createVtuProvider } from "../../src/providers/vtu/client.ts";
import { createTracing } from "../../src/tracing/tracing.ts";
import { generateWebhookSecret } from "../../src/webhooks/secret.ts";
import { idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing, transactionRow } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { setupMockFetch, VtuBook, vtuHandlers, vtuTestConfig } from "../helpers/vtu-mock.ts";
import { type ReceivedWebhook, startWebhookReceiver } from "../helpers/webhook-receiver.ts";

// A live vend from accept to webhook through the real VTU adapter (msw upstream), with spans exported in memory.
const network = setupMockFetch({ onUnhandledFrame: "bypass" });
const book = new VtuBook();
const receiver = startWebhookReceiver();
const exported = new InMemorySpanExporter();
const exportedWhileOff = new InMemorySpanExporter();
const credit = 10_000_000;
const priceKobo = 9_700;
let traced: Setup;
let untraced: Setup;

interface Setup {
  server: TestServer;
  client: HttpClient;
}

/** A server with a funded live wallet whose webhooks go to the receiver under `path`. */
async function setUp(otlpEndpoint: string | undefined, exporter: InMemorySpanExporter, path: string): Promise<Setup> {
  const operations = { ...loadConfig({}).operations, otlpEndpoint };
  const server = await startTestServer(fastProcessing({ providers: { vtu: vtuTestConfig }, operations }), {
    liveProviders: [createVtuProvider(vtuTestConfig)],
    spanExporter: exporter,
  });
  const account = await server.createAccount("Traced Co");
  const funded = await server.admin.post(
    `/admin/v1/accounts/${account.id}/wallet/credit`,
    { mode: "live", amount_kobo: credit, note: "float" },
    idem(),
  );
  expect(funded.status).toBe(200);
  // Live endpoints must be https through the API; the test receiver is plain http on loopback.
  await server.database.handle.db
    .insert(webhookEndpoints)
    .values({ accountId: account.id, mode: "live", url: `${receiver.url}${path}`, secret: generateWebhookSecret() });
  return { server, client: server.client(account.liveKey) };
}

beforeAll(async () => {
  network.enable();
  network.use(...vtuHandlers({ book, pay: { kind: "deliver" } }));
  traced = await setUp("http://127.0.0.1:4318/v1/traces", exported, "/traced");
  untraced = await setUp(undefined, exportedWhileOff, "/untraced");
});
afterAll(async () => {
  await traced.server.close();
  await untraced.server.close();
  await receiver.close();
  network.disable();
});

/** Accepts a vend (with the client's extra headers), processes it and delivers its webhook; what arrived. */
async function vendToWebhook({ server, client }: Setup, phone: string, headers: Record<string, string> = {}) {
  const accepted = await client.post(
    "/api/v1/vend",
    { product_code: "mtn-airtime", phone_number: phone, amount_kobo: 10_000 },
    { headers: { ...idem().headers, ...headers } },
  );
  expect(accepted.status).toBe(202);
  const reference: string = accepted.json.data.reference;
  expect(await processingRunner({ ...server.deps, apiBaseUrl: server.url }, "trace-worker").tick()).toBe(1);
  const before = receiver.received.length;
  expect(await webhookRunner(server.deps, "trace-webhooks").tick()).toBe(1);
  await receiver.waitFor(before + 1);
  const webhook = receiver.received.find((r) => r.body.includes(reference)) as ReceivedWebhook;
  expect(JSON.parse(webhook.body).data.status).toBe("successful");
  const payRequest = book.requestsTo("pay").find((r) => (r.body as { request_id?: string }).request_id === reference);
  return { reference, webhook, payRequest, row: await transactionRow(server.database.handle.db, reference) };
}

const traceIdOf = (traceparent: string | null | undefined) => traceparent?.split("-")[1];
const spanNamed = (spans: ReadableSpan[], name: string) => spans.filter((span) => span.name === name);

/** Money moved once: the wallet lost exactly the prices of its successful vends, nothing held, ledger agrees. */
async function expectPaidOnce({ server, client }: Setup, vends: number) {
  const wallet = (await client.get("/api/v1/wallet")).json.data;
  expect(wallet).toMatchObject({ balance_kobo: credit - vends * priceKobo, held_kobo: 0 });
  expect(await reconcileWallets(server.database.handle.db)).toEqual([]);
}

describe("tracing on (an OTLP endpoint configured, spans exported in memory)", () => {
  test("one trace from the accepting request through the job, the provider call and the webhook delivery", async () => {
    exported.reset();
    const { reference, webhook, payRequest, row } = await vendToWebhook(traced, "08031230001");
    const spans = exported.getFinishedSpans();
    const [request] = spanNamed(spans, "POST /api/v1/vend");
    const [job] = spanNamed(spans, "process transaction");
    const [providerCall] = spanNamed(spans, "POST vtu /api/pay");
    const [delivery] = spanNamed(spans, "POST webhook");
    if (!request || !job || !providerCall || !delivery) throw new Error(`missing spans: ${spans.map((s) => s.name)}`);

    const traceId = request.spanContext().traceId;
    for (const span of [job, providerCall, delivery]) expect(span.spanContext().traceId).toBe(traceId);
    // The stored context is the request span's; the job continues it, the provider call is the job's child.
    expect(row.traceContext).toBe(`00-${traceId}-${request.spanContext().spanId}-01`);
    expect(job.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(providerCall.parentSpanContext?.spanId).toBe(job.spanContext().spanId);
    expect(delivery.parentSpanContext?.spanId).toBe(request.spanContext().spanId);

    expect(request.kind).toBe(SpanKind.SERVER);
    expect(request.attributes).toMatchObject({
      "http.request.method": "POST",
      "url.path": "/api/v1/vend",
      "http.route": "/api/v1/vend",
      "http.response.status_code": 202,
    });
    expect(typeof request.attributes["http.request.id"]).toBe("string");
    expect(job.attributes).toMatchObject({ "vend.reference": reference, "vend.status": "successful" });
    expect(providerCall.kind).toBe(SpanKind.CLIENT);
    expect(providerCall.attributes).toMatchObject({ "http.request.method": "POST", "http.response.status_code": 200 });
    expect(delivery.kind).toBe(SpanKind.CLIENT);
    expect(delivery.attributes).toMatchObject({ "http.response.status_code": 200 });

    // The provider and the webhook receiver are told the trace, each under the span that called it.
    expect(payRequest?.headers.traceparent).toBe(`00-${traceId}-${providerCall.spanContext().spanId}-01`);
    expect(webhook.headers.traceparent).toBe(`00-${traceId}-${delivery.spanContext().spanId}-01`);
    await expectPaidOnce(traced, 1);
  });

  test("a client's traceparent on the accept becomes the vend's trace", async () => {
    exported.reset();
    const clientTraceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const clientSpanId = "00f067aa0ba902b7";
    const { webhook, payRequest, row } = await vendToWebhook(traced, "08031230002", {
      traceparent: `00-${clientTraceId}-${clientSpanId}-01`,
    });
    const spans = exported.getFinishedSpans();
    const [request] = spanNamed(spans, "POST /api/v1/vend");
    expect(request?.parentSpanContext?.spanId).toBe(clientSpanId);
    expect(new Set(spans.map((span) => span.spanContext().traceId))).toEqual(new Set([clientTraceId]));
    expect(spanNamed(spans, "process transaction")).toHaveLength(1);
    expect(traceIdOf(row.traceContext)).toBe(clientTraceId);
    expect(traceIdOf(payRequest?.headers.traceparent)).toBe(clientTraceId);
    expect(traceIdOf(webhook.headers.traceparent)).toBe(clientTraceId);
    await expectPaidOnce(traced, 2);
  });

  test("a malformed client traceparent starts a new trace; the request is answered as usual", async () => {
    exported.reset();
    const { row } = await vendToWebhook(traced, "08031230003", { traceparent: "00-not-a-trace-01" });
    const [request] = spanNamed(exported.getFinishedSpans(), "POST /api/v1/vend");
    expect(request?.parentSpanContext).toBeUndefined();
    expect(traceIdOf(row.traceContext)).toBe(request?.spanContext().traceId);
    await expectPaidOnce(traced, 3);
  });

  test("a request no operation matches is a span named by its method alone", async () => {
    exported.reset();
    const missing = await traced.client.get("/api/v1/nowhere");
    expect(missing.status).toBe(404);
    const [span] = exported.getFinishedSpans();
    expect(span?.name).toBe("GET");
    expect(span?.attributes).toMatchObject({ "url.path": "/api/v1/nowhere", "http.response.status_code": 404 });
  });
});

describe("spans of batches and export", () => {
  test("a completion batch of one is its job's child; a larger batch links to each of its jobs", async () => {
    exported.reset();
    const { row } = await vendToWebhook(traced, "08031230005");
    exported.reset();
    const tracing = traced.server.deps.tracing;
    const jobs = ["first", "second", "third"].map((name) => tracing.startSpan(`job ${name}`, { parent: null }));
    // Already successful: each request is answered unchanged without touching the row or the wallet.
    const complete = completionBatcher(traced.server.deps.db, tracing);
    const request = { id: row.id, known: row, outcome: { status: "successful" as const, metadata: {} } };
    // The first runs at once, alone; the two arriving while it runs go together in the next batch.
    const results = await Promise.all(jobs.map((job) => job.run(() => complete(request))));
    expect(results.map((result) => result.changed)).toEqual([false, false, false]);
    for (const job of jobs) job.end();
    const batches = spanNamed(exported.getFinishedSpans(), "complete transactions");
    const idOf = (traceparent: string | undefined) => traceparent?.split("-")[2] ?? "none";
    const [alone, together] = batches;
    expect(batches).toHaveLength(2);
    expect(alone?.parentSpanContext?.spanId).toBe(idOf(jobs[0]?.traceparent));
    expect(alone?.links).toEqual([]);
    expect(together?.parentSpanContext).toBeUndefined();
    expect(together?.attributes["vend.batch.size"]).toBe(2);
    expect(together?.links.map((link) => link.context.spanId)).toEqual([idOf(jobs[1]?.traceparent), idOf(jobs[2]?.traceparent)]);
    await expectPaidOnce(traced, 4);
  });

  test("without a test's exporter, spans are posted to the OTLP/HTTP endpoint with the service name", async () => {
    const posted: { path: string; body: string }[] = [];
    const collector = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(request) {
        posted.push({ path: new URL(request.url).pathname, body: await request.text() });
        return Response.json({});
      },
    });
    try {
      const tracing = createTracing({ otlpEndpoint: `http://127.0.0.1:${collector.port}/v1/traces`, serviceName: "vend-traced" });
      tracing.startSpan("exported span", { kind: "server" }).end();
      await tracing.shutdown();
      expect(posted.map((p) => p.path)).toEqual(["/v1/traces"]);
      const body = JSON.parse(posted[0]?.body ?? "{}");
      const [resourceSpans] = body.resourceSpans;
      expect(resourceSpans.resource.attributes).toContainEqual({ key: "service.name", value: { stringValue: "vend-traced" } });
      expect(resourceSpans.scopeSpans[0].spans.map((span: { name: string }) => span.name)).toEqual(["exported span"]);
    } finally {
      await collector.stop(true);
    }
  });
});

describe("tracing off (no OTLP endpoint)", () => {
  test("nothing is exported, no trace context is stored, no traceparent is sent", async () => {
    const { webhook, payRequest, row } = await vendToWebhook(untraced, "08031230004", {
      traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    });
    expect(untraced.server.deps.tracing.enabled).toBe(false);
    expect(exportedWhileOff.getFinishedSpans()).toEqual([]);
    expect(row.traceContext).toBeNull();
    expect(payRequest?.headers.traceparent).toBeUndefined();
    expect(webhook.headers.traceparent).toBeUndefined();
    await expectPaidOnce(untraced, 1);
  });
});
