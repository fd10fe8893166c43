import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { eq, sql } from "drizzle-orm";
import { processingRunner } from "../../src/background.ts";
import type { Config } from "../../src/config.ts";
import { ledgerEntries } from "../../src/db/schema/index.ts";
import { checkProviderBalances } from "../../src/jobs/tasks/provider-balances.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { signCallback } from "../../src/lib/shared/callback-signature.ts";
import { loadConfig } from "../../src/load-config.ts";
import { createLogger } from "../../src/logger.ts";
import { checkRoutingAgainstCatalogue } from "../../src/providers/catalogue-check.ts";
import { createDeps, startServer } from "../../src/server.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import {
  ClubkonnectBook,
  type ClubkonnectOrderRequest,
  type ClubkonnectVendScenario,
  clubkonnectCallbackQuery,
  clubkonnectHandlers,
  clubkonnectTestConfig,
} from "../helpers/clubkonnect-mock.ts";
import { HttpClient } from "../helpers/http.ts";
import { fastProcessing, transactionRow, vendAirtime } from "../helpers/processing.ts";
import { changeTransactions } from "../helpers/queue.ts";
import { captureLogs, startTestServer, type TestServer, testAdminToken } from "../helpers/server.ts";
import {
  setupMockFetch,
  VtuBook,
  type VtuFault,
  type VtuPayBody,
  type VtuPayScenario,
  vtuCallbackBody,
  vtuHandlers,
  vtuTestConfig,
} from "../helpers/vtu-mock.ts";
import { waitUntil } from "../helpers/wait.ts";

// Two live providers behind msw (a VTpass-style "vtu" and a ClubKonnect-style "clubkonnect"), the real
// worker, the real database. Each test uses its own destinations, so the providers' books tell its orders apart.
const network = setupMockFetch({ onUnhandledFrame: "bypass" });
const vtu = new VtuBook();
const ck = new ClubkonnectBook();
/** Scenarios by the destination's last four digits; anything else is delivered. */
const vtuPays = new Map<string, VtuPayScenario>();
const vtuRequeries = new Map<string, VtuFault>();
const ckVends = new Map<string, ClubkonnectVendScenario>();
const lastFour = (text: string) => text.slice(-4);

const vtuPay = (body: VtuPayBody): VtuPayScenario => vtuPays.get(lastFour(body.billersCode)) ?? { kind: "deliver" };
const vtuRequery = (requestId: string): VtuFault | undefined => {
  const body = vtu.requestsTo("pay").find((r) => (r.body as VtuPayBody).request_id === requestId)?.body as VtuPayBody;
  return body ? vtuRequeries.get(lastFour(body.billersCode)) : undefined;
};
const ckVend = (order: ClubkonnectOrderRequest): ClubkonnectVendScenario =>
  ckVends.get(lastFour(order.params.MobileNumber ?? "")) ?? { kind: "deliver" };

const credit = 100_000_000;
const dataProduct = "mtn-data-1gb-1d";

function routedConfig(overrides: Partial<Config["routing"]> = {}): Partial<Config> {
  return fastProcessing({
    providers: { vtu: vtuTestConfig, clubkonnect: clubkonnectTestConfig },
    routing: {
      routes: [
        { service: "data", network: "mtn", providers: ["vtu", "clubkonnect"] },
        { service: "airtime", network: "glo", providers: ["clubkonnect", "vtu"] },
        { service: "airtime", providers: ["vtu", "clubkonnect"] },
        { service: "electricity", providers: ["vtu", "clubkonnect"] },
      ],
      productCodes: { vtu: { [dataProduct]: "mtn-1gb-daily" }, clubkonnect: { [dataProduct]: "1000.01" } },
      ...overrides,
    },
  });
}

async function liveClient(server: TestServer): Promise<HttpClient> {
  const account = await server.createAccount("Failover Co");
  await server.admin.post(
    `/admin/v1/accounts/${account.id}/wallet/credit`,
    { mode: "live", amount_kobo: credit, note: "float" },
    idem(),
  );
  return server.client(account.liveKey);
}

async function vend(client: HttpClient, body: Record<string, unknown>): Promise<string> {
  const res = await client.post("/api/v1/vend", body, idem());
  if (res.status !== 202) throw new Error(`vend failed: ${res.status} ${res.text}`);
  return res.json.data.reference;
}
const airtime = (client: HttpClient, phone: string, product = "mtn-airtime") =>
  vend(client, { product_code: product, phone_number: phone, amount_kobo: 10_000 });
const data = (client: HttpClient, phone: string) => vend(client, { product_code: dataProduct, phone_number: phone });

const tick = (server: TestServer) => processingRunner({ ...server.deps, apiBaseUrl: server.url }, "failover-worker").tick();
const requeryNow = (server: TestServer) =>
  changeTransactions(server.database.handle.db, sql`update transactions set next_attempt_at = now() where status = 'pending'`);

async function attempts(server: TestServer, reference: string) {
  const res = await server.admin.get(`/admin/v1/transactions/${reference}`);
  expect(res.status).toBe(200);
  return res.json.data.provider_attempts as { provider: string; request_id: string; status: string; answer_ms: number | null }[];
}

async function ledgerKinds(server: TestServer, reference: string): Promise<string[]> {
  const row = await transactionRow(server.database.handle.db, reference);
  const entries = await server.database.handle.db.select().from(ledgerEntries).where(eq(ledgerEntries.transactionId, row.id));
  return entries.map((e) => e.kind).sort();
}

/** Requests each provider received for one order, by the request ids it was sent under. */
const vtuPaysFor = (reference: string) =>
  vtu.requestsTo("pay").filter((r) => (r.body as VtuPayBody).request_id.startsWith(reference)).length;
const ckOrdersFor = (reference: string) =>
  ck.requests.filter((r) => r.path !== "APIQueryV1.asp" && (r.query.RequestID ?? "").startsWith(reference)).length;

beforeAll(() => {
  network.enable();
  network.use(
    ...vtuHandlers({
      book: vtu,
      pay: vtuPay,
      requery: vtuRequery,
      verify: (number) => (number.endsWith("0001") ? { kind: "server-error" } : undefined),
    }),
    ...clubkonnectHandlers({ book: ck, vend: ckVend }),
  );
});
afterAll(() => network.disable());

describe("routing and failover between two live providers", () => {
  let server: TestServer;
  let client: HttpClient;
  beforeAll(async () => {
    server = await startTestServer(routedConfig());
    client = await liveClient(server);
  });
  afterAll(() => server.close());

  test("each service and network goes to its route's first provider, with that provider's product code", async () => {
    const dataRef = await data(client, "08031230101");
    const gloRef = await airtime(client, "08051230102", "glo-airtime");
    await tick(server);
    expect((await transactionRow(server.database.handle.db, dataRef)).status).toBe("successful");
    expect((await transactionRow(server.database.handle.db, gloRef)).status).toBe("successful");
    // Data on mtn: vtu, under its own plan code; ClubKonnect never heard of it.
    const pay = vtu.requestsTo("pay").find((r) => (r.body as VtuPayBody).request_id === dataRef)?.body as VtuPayBody;
    expect(pay.variation_code).toBe("mtn-1gb-daily");
    expect(ckOrdersFor(dataRef)).toBe(0);
    // Airtime on glo: ClubKonnect first (network 02); vtu never heard of it.
    const order = ck.requests.find((r) => r.query.RequestID === gloRef);
    expect(order?.query.MobileNetwork).toBe("02");
    expect(vtuPaysFor(gloRef)).toBe(0);
    expect((await attempts(server, gloRef)).map((a) => [a.provider, a.request_id, a.status])).toEqual([
      ["clubkonnect", gloRef, "successful"],
    ]);
    const listed = (await server.admin.get("/admin/v1/providers")).json.data;
    expect(listed.routes).toEqual([
      { service: "data", network: "mtn", providers: ["vtu", "clubkonnect"] },
      { service: "airtime", network: "glo", providers: ["clubkonnect", "vtu"] },
      { service: "airtime", network: null, providers: ["vtu", "clubkonnect"] },
      { service: "electricity", network: null, providers: ["vtu", "clubkonnect"] },
    ]);
    expect(listed.product_codes.clubkonnect).toEqual({ [dataProduct]: "1000.01" });
  });

  test("A answers 500 and its re-query says it never got the order: B delivers it, captured once", async () => {
    vtuPays.set("0201", { kind: "server-error", outcome: "not-received" });
    const reference = await data(client, "08031230201");
    await tick(server);
    const row = await transactionRow(server.database.handle.db, reference);
    expect(row.status).toBe("successful");
    expect(row.provider).toBe("clubkonnect");
    expect(row.metadata.route).toBe("clubkonnect");
    expect(vtuPaysFor(reference)).toBe(1);
    // B got its own request id and its own plan code.
    const order = ck.requests.find((r) => r.query.RequestID === `${reference}-2`);
    expect(order?.query.DataPlan).toBe("1000.01");
    expect(ckOrdersFor(reference)).toBe(1);
    expect(await ledgerKinds(server, reference)).toEqual(["capture", "hold"]);
    const seen = await attempts(server, reference);
    expect(seen.map((a) => [a.provider, a.request_id, a.status])).toEqual([
      ["vtu", reference, "not_received"],
      ["clubkonnect", `${reference}-2`, "successful"],
    ]);
    expect(seen[1]?.answer_ms).toBeGreaterThanOrEqual(0);
  });

  test("A refuses the order (low float at A): B delivers it", async () => {
    vtuPays.set("0301", { kind: "refuse", code: "018", description: "LOW WALLET BALANCE" });
    const reference = await airtime(client, "08031230301");
    await tick(server);
    expect((await transactionRow(server.database.handle.db, reference)).status).toBe("successful");
    expect((await attempts(server, reference)).map((a) => [a.provider, a.status])).toEqual([
      ["vtu", "failed"],
      ["clubkonnect", "successful"],
    ]);
    expect(await ledgerKinds(server, reference)).toEqual(["capture", "hold"]);
  });

  test("both refuse: the order fails once, the hold released, each asked once", async () => {
    vtuPays.set("0401", { kind: "refuse", code: "018", description: "LOW WALLET BALANCE" });
    ckVends.set("0401", { kind: "refuse", word: "INSUFFICIENT_BALANCE" });
    const reference = await airtime(client, "08031230401");
    await tick(server);
    const row = await transactionRow(server.database.handle.db, reference);
    expect(row.status).toBe("failed");
    expect(vtuPaysFor(reference)).toBe(1);
    expect(ckOrdersFor(reference)).toBe(1);
    expect(await ledgerKinds(server, reference)).toEqual(["hold", "release"]);
  });

  test("A times out; later its re-query says it never got the order: B delivers it", async () => {
    vtuPays.set("0501", { kind: "timeout", delayMs: 5000, outcome: "not-received" });
    const reference = await airtime(client, "08031230501");
    await tick(server);
    let row = await transactionRow(server.database.handle.db, reference);
    expect(row.status).toBe("pending");
    expect(row.provider).toBe("vtu");
    expect(ckOrdersFor(reference)).toBe(0);
    expect((await attempts(server, reference)).map((a) => a.status)).toEqual(["unknown"]);
    await requeryNow(server);
    await tick(server);
    row = await transactionRow(server.database.handle.db, reference);
    expect(row.status).toBe("successful");
    expect(row.provider).toBe("clubkonnect");
    expect(vtuPaysFor(reference)).toBe(1);
    expect(ckOrdersFor(reference)).toBe(1);
  }, 20_000);

  test("A times out and its re-query cannot be reached: the order stays pending with A, B is never called", async () => {
    vtuPays.set("0601", { kind: "timeout", delayMs: 5000, outcome: "not-received" });
    vtuRequeries.set("0601", { kind: "network-error" });
    const reference = await airtime(client, "08031230601");
    await tick(server);
    for (let round = 0; round < 3; round++) {
      await requeryNow(server);
      await tick(server);
    }
    const row = await transactionRow(server.database.handle.db, reference);
    expect(row.status).toBe("pending");
    expect(row.provider).toBe("vtu");
    expect(ckOrdersFor(reference)).toBe(0);
    expect(vtu.requestsTo("requery").filter((r) => (r.body as { request_id: string }).request_id === reference)).toHaveLength(3);
    expect(await ledgerKinds(server, reference)).toEqual(["hold"]);
  }, 20_000);

  test("A's late success callback after B delivered: captured once, the double delivery raised and listed", async () => {
    vtuPays.set("0701", { kind: "timeout", delayMs: 5000, outcome: "not-received" });
    const reference = await airtime(client, "08031230701");
    await tick(server);
    await requeryNow(server);
    await tick(server);
    expect((await transactionRow(server.database.handle.db, reference)).status).toBe("successful");

    // A delivered after all, and says so.
    const pay = vtu.requestsTo("pay").find((r) => (r.body as VtuPayBody).request_id === reference)?.body as VtuPayBody;
    vtu.record(pay, "delivered");
    const raw = JSON.stringify(vtuCallbackBody(vtu, reference));
    const headers = {
      authorization: `Bearer ${vtuTestConfig.callbackToken}`,
      "x-provider-signature": signCallback(vtuTestConfig.callbackSecret, raw),
      "content-type": "application/json",
    };
    const logs = captureLogs(server);
    try {
      for (let repeat = 0; repeat < 2; repeat++) {
        const callback = await server.anonymous.post("/callbacks/providers/vtu", undefined, { raw, headers });
        expect(callback.status).toBe(200);
        expect(callback.json.data.status).toBe("successful");
      }
    } finally {
      logs.restore();
    }
    expect(await ledgerKinds(server, reference)).toEqual(["capture", "hold"]);
    const anomalies = (await server.admin.get("/admin/v1/anomalies?kind=double_delivery")).json.data.items;
    const mine = anomalies.filter((a: { reference: string }) => a.reference === reference);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ kind: "double_delivery", provider: "vtu" });
    expect(mine[0].message).toContain("may have received it twice");
    const errors = logs.lines.map((line) => JSON.parse(line)).filter((l) => l.level === 50 || l.level === "error");
    expect(errors.some((l) => l.reference === reference)).toBe(true);
    expect((await attempts(server, reference)).map((a) => [a.provider, a.status])).toEqual([
      ["vtu", "successful"],
      ["clubkonnect", "successful"],
    ]);
    expect(await reconcileWallets(server.database.handle.db)).toEqual([]);
  }, 20_000);

  test("ClubKonnect's unsigned GET notification only brings the re-query forward; a forged one changes nothing", async () => {
    ckVends.set("1101", { kind: "received" });
    ckVends.set("1102", { kind: "received" });
    const settled = await airtime(client, "08051231101", "glo-airtime");
    const forged = await airtime(client, "08051231102", "glo-airtime");
    await tick(server);
    for (const reference of [settled, forged]) {
      expect((await transactionRow(server.database.handle.db, reference)).status).toBe("pending");
    }
    const notify = (query: Record<string, string>) =>
      server.anonymous.get(`/callbacks/providers/clubkonnect?${new URLSearchParams(query)}`);

    ck.settle(settled, "ORDER_COMPLETED");
    const real = await notify(clubkonnectCallbackQuery(ck, settled));
    expect(real.status).toBe(200);
    expect(real.json.data).toEqual({ requery_scheduled: true });
    // Someone claims the other order completed; ClubKonnect still holds it as received.
    const fake = await notify({ requestid: forged, orderstatus: "ORDER_COMPLETED", statuscode: "200" });
    expect(fake.json.data).toEqual({ requery_scheduled: true });
    await tick(server);
    expect((await transactionRow(server.database.handle.db, settled)).status).toBe("successful");
    expect((await transactionRow(server.database.handle.db, forged)).status).toBe("pending");
    expect(await ledgerKinds(server, forged)).toEqual(["hold"]);

    expect((await notify({ requestid: "txn_nosuchorder000000000000000" })).json.data).toEqual({ requery_scheduled: false });
    // A final order is not re-queried again.
    expect((await notify({ requestid: settled })).json.data).toEqual({ requery_scheduled: false });
    expect((await server.anonymous.get("/callbacks/providers/vtu?requestid=x")).status).toBe(404);
    const stray = await server.anonymous.get("/callbacks/providers/clubkonnect?requestid=x&token=abc");
    expect(stray.status).toBe(400);
  });

  test("routes and product codes are checked against the catalogue at start-up, naming the entry", async () => {
    const routing = { ...server.deps.config.routing, file: "/etc/vend/providers.yaml" };
    const start = (changes: Partial<Config["routing"]>) =>
      createDeps({ ...server.deps.config, routing: { ...routing, ...changes } }, server.database.handle, createLogger("silent"));
    await expect(start({ routes: [{ service: "data", network: "ikedc", providers: ["vtu"] }] })).rejects.toThrow(
      'Invalid configuration: PROVIDERS_FILE /etc/vend/providers.yaml: routes[0].network "ikedc" sells no data in the catalogue (it has: 9mobile, airtel, glo, mtn)',
    );
    await expect(start({ productCodes: { clubkonnect: { "mtn-data-1tb": "1" } } })).rejects.toThrow(
      "providers.clubkonnect.products.mtn-data-1tb is not a product in the catalogue",
    );
  });

  test("providers.example.yaml and the operating guide's example load with the real plugins and match the catalogue", async () => {
    const guide = await Bun.file(new URL("../../docs/operating.md", import.meta.url)).text();
    const block = /## Live providers[\s\S]*?```yaml\n([\s\S]*?)```/.exec(guide)?.[1] ?? "";
    expect(block).toContain("providers:");
    const dir = await mkdtemp(join(tmpdir(), "vend-readme-"));
    try {
      await writeFile(join(dir, "providers.yaml"), block);
      const secrets = {
        VTPASS_API_KEY: "k",
        VTPASS_SECRET_KEY: "s",
        VTPASS_CALLBACK_TOKEN: "t",
        VTPASS_CALLBACK_SECRET: "c",
        CLUBKONNECT_API_KEY: "ck",
      };
      for (const file of [fileURLToPath(new URL("../../providers.example.yaml", import.meta.url)), join(dir, "providers.yaml")]) {
        const config = loadConfig({ PROVIDERS_FILE: file, WORKER_LEASE_SECONDS: "60", ...secrets });
        expect(config.providers.vtu?.baseUrl).toBe("https://vtpass.com");
        expect(config.providers.clubkonnect?.userId).toBe("CK100000001");
        expect(config.routing.routes.length).toBeGreaterThanOrEqual(4);
        await checkRoutingAgainstCatalogue(server.database.handle.db, config.routing);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("an accepted order none of whose providers may take it any more waits unsent, then goes out", async () => {
    const reference = await airtime(client, "08031231201");
    for (const name of ["vtu", "clubkonnect"])
      await server.admin.post(`/admin/v1/providers/${name}/disable`, { reason: "drill" });
    try {
      await tick(server);
      const waiting = await transactionRow(server.database.handle.db, reference);
      expect(waiting).toMatchObject({ status: "queued", providerSends: 0, leaseOwner: null });
      expect(await attempts(server, reference)).toEqual([]);
      expect(vtuPaysFor(reference) + ckOrdersFor(reference)).toBe(0);
      // New orders are refused meanwhile, and nothing is charged for them.
      const refused = await client.post(
        "/api/v1/vend",
        { product_code: "mtn-airtime", phone_number: "08031231202", amount_kobo: 10_000 },
        idem(),
      );
      expect(refused.status).toBe(503);
      expect(refused.json.code).toBe("NO_ROUTE");
    } finally {
      for (const name of ["vtu", "clubkonnect"]) await server.admin.post(`/admin/v1/providers/${name}/enable`);
    }
    await changeTransactions(
      server.database.handle.db,
      sql`update transactions set next_attempt_at = now() where reference = ${reference}`,
    );
    await tick(server);
    expect(await transactionRow(server.database.handle.db, reference)).toMatchObject({ status: "successful", provider: "vtu" });
    expect(vtuPaysFor(reference)).toBe(1);
  });

  test("verification asks the route's next provider when the first cannot answer, and trusts a 'no such customer'", async () => {
    ck.addCustomer("02", "45031230001", { customer_name: "ADA OBI" }); // 02: IKEDC at ClubKonnect
    const verify = (meter: string) => client.post("/api/v1/bills/electricity/verify", { network: "ikedc", meter_number: meter });
    const answered = await verify("45031230001");
    expect(answered.status).toBe(200);
    expect(answered.json.data.customer_name).toBe("ADA OBI");
    const asked = (meter: string) => ({
      vtu: vtu.requestsTo("merchant-verify").filter((r) => (r.body as { billersCode: string }).billersCode === meter).length,
      clubkonnect: ck.requests.filter((r) => r.query.MeterNo === meter).length,
    });
    expect(asked("45031230001")).toEqual({ vtu: 1, clubkonnect: 1 });
    // VTU answers that it knows no such meter: that is an answer, not a reason to ask elsewhere.
    const unknown = await verify("45031230002");
    expect(unknown.status).toBe(404);
    expect(asked("45031230002")).toEqual({ vtu: 1, clubkonnect: 0 });
  });

  test("an operator disables A: new orders go to B in every process within seconds", async () => {
    // A second process on the same database: its own deps, health and HTTP listener.
    const other = await createDeps(server.deps.config, server.database.handle, createLogger("silent"));
    const listener = startServer(other, { port: 0, hostname: "127.0.0.1" });
    try {
      const otherClient = new HttpClient(listener.url, client.token);
      const disabled = await server.admin.post("/admin/v1/providers/vtu/disable", { reason: "VTU outage drill" });
      expect(disabled.status).toBe(200);
      expect(disabled.json.data).toMatchObject({
        name: "vtu",
        enabled: false,
        disabled_reason: "VTU outage drill",
        available: false,
      });
      const started = Date.now();
      let routedTo = "vtu";
      while (routedTo !== "clubkonnect" && Date.now() - started < 5000) {
        const res = await otherClient.post(
          "/api/v1/vend",
          { product_code: "mtn-airtime", phone_number: "08031230801", amount_kobo: 10_000 },
          idem(),
        );
        routedTo = res.json.data.metadata.route;
        if (routedTo !== "clubkonnect") await Bun.sleep(50);
      }
      expect(routedTo).toBe("clubkonnect");
      expect(Date.now() - started).toBeLessThan(2000);
      const otherAdmin = new HttpClient(listener.url, testAdminToken);
      const seen = (await otherAdmin.get("/admin/v1/providers")).json.data.providers.find(
        (p: { name: string }) => p.name === "vtu",
      );
      expect(seen).toMatchObject({ enabled: false, disabled_reason: "VTU outage drill" });
      expect((await server.admin.post("/admin/v1/providers/vtu/enable")).json.data.enabled).toBe(true);
    } finally {
      await listener.stop();
      await other.waiters.stop();
      await other.providers.health.stop();
      other.metrics.close();
    }
  });
});

describe("the circuit breaker", () => {
  let server: TestServer;
  let client: HttpClient;
  beforeAll(async () => {
    server = await startTestServer(routedConfig({ breaker: { failures: 3, cooldownMs: 1500 } }));
    client = await liveClient(server);
  });
  afterAll(() => server.close());

  const vtuBreaker = async () => {
    const providers = (await server.admin.get("/admin/v1/providers")).json.data.providers;
    return providers.find((p: { name: string }) => p.name === "vtu").breakers[0].state;
  };

  test("orders A refuses move on but do not open its breaker; the sandbox's deliberate failures never trip one", async () => {
    vtuPays.set("0801", { kind: "refuse", code: "016", description: "TRANSACTION FAILED" });
    for (let i = 0; i < 4; i++) {
      const reference = await airtime(client, "08031230801");
      await tick(server);
      expect((await transactionRow(server.database.handle.db, reference)).provider).toBe("clubkonnect");
    }
    expect(await vtuBreaker()).toBe("closed");

    const { client: testClient } = await fundedAccount(server, 10_000_000);
    // 1111 fails; 5555 answers with a provider error first.
    for (let i = 0; i < 4; i++) {
      await vendAirtime(testClient, "08031231111");
      await vendAirtime(testClient, "08031235555");
    }
    await tick(server);
    expect((await server.admin.get("/admin/v1/providers")).json.data.providers[0]).toMatchObject({
      name: "sandbox",
      available: true,
    });
    expect(await vendAirtime(testClient, "08031234567")).toStartWith("txn_");
  });

  test("opens after N failures (new orders skip A), half-opens after the cool-down, closes on a success", async () => {
    vtuPays.set("0901", { kind: "server-error", outcome: "failed" });
    for (let i = 0; i < 3; i++) {
      const reference = await airtime(client, "08031230901");
      await tick(server);
      expect((await transactionRow(server.database.handle.db, reference)).provider).toBe("clubkonnect");
    }
    expect(vtu.requestsTo("pay").filter((r) => (r.body as VtuPayBody).billersCode === "08031230901")).toHaveLength(3);
    expect(await vtuBreaker()).toBe("open");

    // Open: accepted straight onto B; A is not tried.
    const skipping = await airtime(client, "08031230902");
    await tick(server);
    const skipped = await transactionRow(server.database.handle.db, skipping);
    expect(skipped.status).toBe("successful");
    expect(skipped.metadata.route).toBe("clubkonnect");
    expect(vtuPaysFor(skipping)).toBe(0);

    // After the cool-down one order probes A; A is healthy again, so the breaker closes.
    await waitUntil(async () => (await vtuBreaker()) === "half_open", { what: "A's breaker half-open after its cool-down" });
    expect(await vtuBreaker()).toBe("half_open");
    const probe = await airtime(client, "08031230903");
    await tick(server);
    const probed = await transactionRow(server.database.handle.db, probe);
    expect(probed.provider).toBe("vtu");
    expect(probed.status).toBe("successful");
    expect(await vtuBreaker()).toBe("closed");
    const after = await airtime(client, "08031230904");
    await tick(server);
    expect((await transactionRow(server.database.handle.db, after)).provider).toBe("vtu");
    expect(await reconcileWallets(server.database.handle.db)).toEqual([]);
  }, 20_000);
});

describe("provider floats and figures", () => {
  let server: TestServer;
  let client: HttpClient;
  beforeAll(async () => {
    server = await startTestServer(routedConfig({ lowBalanceKobo: { clubkonnect: 1_000_000 } }));
    client = await liveClient(server);
  });
  afterAll(() => server.close());

  const check = () => checkProviderBalances(server.deps);
  const lowBalanceAnomalies = async () =>
    (await server.admin.get("/admin/v1/anomalies?kind=low_balance&provider=clubkonnect")).json.data.items as unknown[];

  test("each provider's float is recorded; falling below its threshold is raised once per crossing", async () => {
    vtu.balanceKobo = 7_500_000;
    ck.balanceKobo = 5_000_000;
    expect(await check()).toBe(2);
    let stats = (await server.admin.get("/admin/v1/providers/clubkonnect/stats")).json.data;
    expect(stats).toMatchObject({ provider: "clubkonnect", balance_kobo: 5_000_000, low_balance: false });
    const vtuListed = (await server.admin.get("/admin/v1/providers")).json.data.providers.find(
      (p: { name: string }) => p.name === "vtu",
    );
    expect(vtuListed).toMatchObject({ balance_kobo: 7_500_000, low_balance_kobo: null, low_balance: false });
    expect(await lowBalanceAnomalies()).toHaveLength(0);

    ck.balanceKobo = 400_000;
    await check();
    await check();
    expect(await lowBalanceAnomalies()).toHaveLength(1);
    stats = (await server.admin.get("/admin/v1/providers/clubkonnect/stats")).json.data;
    expect(stats).toMatchObject({ balance_kobo: 400_000, low_balance: true });

    // Topped up, then low again: a second crossing, a second anomaly.
    ck.balanceKobo = 2_000_000;
    await check();
    ck.balanceKobo = 900_000;
    await check();
    expect(await lowBalanceAnomalies()).toHaveLength(2);
  });

  test("stats count each provider's orders over 5 and 60 minutes, with answer times", async () => {
    vtuPays.set("1001", { kind: "refuse", code: "018", description: "LOW WALLET BALANCE" });
    ckVends.set("1002", { kind: "received" });
    const moved = await airtime(client, "08031231001");
    const held = await airtime(client, "08051231002", "glo-airtime");
    const delivered = await airtime(client, "08031231003");
    await tick(server);
    expect((await transactionRow(server.database.handle.db, moved)).provider).toBe("clubkonnect");
    expect((await transactionRow(server.database.handle.db, held)).status).toBe("pending");
    expect((await transactionRow(server.database.handle.db, delivered)).provider).toBe("vtu");
    const vtuStats = (await server.admin.get("/admin/v1/providers/vtu/stats")).json.data;
    const ckStats = (await server.admin.get("/admin/v1/providers/clubkonnect/stats")).json.data;
    for (const window of vtuStats.windows) {
      expect(window).toMatchObject({
        sent: 2,
        successful: 1,
        failed: 1,
        not_received: 0,
        open: 0,
        success_rate: 0.5,
        failure_rate: 0.5,
      });
      expect(window.p50_ms).toBeGreaterThanOrEqual(0);
      expect(window.p95_ms).toBeGreaterThanOrEqual(window.p50_ms);
    }
    expect(vtuStats.windows.map((w: { minutes: number }) => w.minutes)).toEqual([5, 60]);
    expect(ckStats.windows[0]).toMatchObject({ sent: 2, successful: 1, open: 1, success_rate: 1 });
    expect(ckStats.pending).toBe(1);
    expect(vtuStats.pending).toBe(0);
    const unknown = await server.admin.get("/admin/v1/providers/nope/stats");
    expect(unknown.status).toBe(404);
    expect(unknown.json.message).toContain("the providers are sandbox, vtu, clubkonnect");
  });
});
