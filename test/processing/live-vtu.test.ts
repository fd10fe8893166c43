import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { processingRunner } from "../../src/background.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { signCallback } from "../../src/lib/shared/callback-signature.ts";
import { createVtuProvider } from "../../src/providers/vtu/client.ts";
import { idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing } from "../helpers/processing.ts";
import { parsePrometheusText, total } from "../helpers/prometheus.ts";
import { changeTransactions } from "../helpers/queue.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import {
  setupMockFetch,
  VtuBook,
  type VtuPayBody,
  type VtuPayScenario,
  vtuCallbackBody,
  vtuHandlers,
  vtuTestConfig,
} from "../helpers/vtu-mock.ts";

// Live mode end to end: the real VTU adapter and worker against a mocked upstream (msw), nothing else mocked.
const network = setupMockFetch({ onUnhandledFrame: "bypass" });
const book = new VtuBook();
let server: TestServer;
let client: HttpClient;
const credit = 50_000_000;

const scenarios: Record<string, VtuPayScenario> = {
  "1111": { kind: "fail" },
  "2222": { kind: "processing" },
  "5555": { kind: "server-error", outcome: "delivered" },
  "7777": { kind: "timeout", delayMs: 5000, outcome: "delivered" },
  "8888": { kind: "malformed", outcome: "delivered" },
  "9999": { kind: "wrong-shape", outcome: "failed" },
};
const scenarioFor = (body: VtuPayBody): VtuPayScenario => scenarios[body.billersCode.slice(-4)] ?? { kind: "deliver" };

beforeAll(async () => {
  network.enable();
  network.use(...vtuHandlers({ book, pay: scenarioFor }));
  server = await startTestServer(fastProcessing({ providers: { vtu: vtuTestConfig } }), {
    liveProviders: [createVtuProvider(vtuTestConfig)],
  });
  const account = await server.createAccount("Live Co");
  await server.admin.post(
    `/admin/v1/accounts/${account.id}/wallet/credit`,
    { mode: "live", amount_kobo: credit, note: "float" },
    idem(),
  );
  client = server.client(account.liveKey);
});
afterAll(async () => {
  await server.close();
  network.disable();
});

const tick = () => processingRunner({ ...server.deps, apiBaseUrl: server.url }, "live-worker").tick();
const requeryNow = () =>
  changeTransactions(server.database.handle.db, sql`update transactions set next_attempt_at = now() where status = 'pending'`);

describe("live vends through the VTU provider (msw upstream)", () => {
  test("success, decline, pending then callback, 5xx/timeout/malformed then re-query: never a crash, never a lost hold", async () => {
    const phones = { ok: "08031234567", ...Object.fromEntries(Object.keys(scenarios).map((d) => [d, `0803123${d}`])) };
    const references: Record<string, string> = {};
    for (const [name, phone] of Object.entries(phones)) {
      const res = await client.post(
        "/api/v1/vend",
        { product_code: "mtn-airtime", phone_number: phone, amount_kobo: 10_000 },
        idem(),
      );
      expect(res.status).toBe(202);
      expect(res.json.data.mode).toBe("live");
      references[name] = res.json.data.reference;
    }
    const status = async (name: string) => (await client.get(`/api/v1/transactions/${references[name]}`)).json.data.status;

    await tick();
    expect(await status("ok")).toBe("successful");
    expect(await status("1111")).toBe("failed");
    for (const unknown of ["2222", "5555", "7777", "8888", "9999"]) expect(await status(unknown)).toBe("pending");

    await requeryNow();
    await tick();
    expect(await status("5555")).toBe("successful");
    expect(await status("7777")).toBe("successful");
    expect(await status("8888")).toBe("successful");
    expect(await status("9999")).toBe("failed");
    expect(await status("2222")).toBe("pending");

    // The provider settles 2222 and calls back (VTpass format, signed like every provider callback).
    const reference = references["2222"] ?? "";
    book.settle(reference, "delivered");
    const raw = JSON.stringify(vtuCallbackBody(book, reference));
    const callback = await server.anonymous.post("/callbacks/providers/vtu", undefined, {
      raw,
      headers: {
        authorization: `Bearer ${vtuTestConfig.callbackToken}`,
        "x-provider-signature": signCallback(vtuTestConfig.callbackSecret, raw),
        "content-type": "application/json",
      },
    });
    expect(callback.status).toBe(200);
    expect(callback.json.data.status).toBe("successful");

    // Each order was paid once: re-queries, never a second pay.
    for (const ref of Object.values(references)) {
      expect(book.requestsTo("pay").filter((r) => (r.body as { request_id?: string }).request_id === ref)).toHaveLength(1);
    }
    const successes = ["ok", "2222", "5555", "7777", "8888"].length;
    const wallet = (await client.get("/api/v1/wallet")).json.data;
    expect(wallet).toEqual({
      mode: "live",
      currency: "NGN",
      balance_kobo: credit - successes * 9_700,
      held_kobo: 0,
      available_kobo: credit - successes * 9_700,
      low_balance_threshold_kobo: null,
    });
    expect(await reconcileWallets(server.database.handle.db)).toEqual([]);

    // The metrics saw the same: a 5xx, a malformed or a wrong-shaped answer is unreadable (5555, 8888, 9999), a
    // timeout no answer (7777); those four and 2222 went pending once each.
    const families = parsePrometheusText(await server.deps.metrics.scrape());
    const vtu = { service: "airtime", network: "mtn", provider: "vtu" };
    expect({
      unreadable: total(families, "vend_provider_errors_total", { provider: "vtu", kind: "unreadable" }),
      unanswered: total(families, "vend_provider_errors_total", { provider: "vtu", kind: "unanswered" }),
      accepted: total(families, "vend_vends_total", { event: "accepted", ...vtu }),
      successful: total(families, "vend_vends_total", { event: "successful", ...vtu }),
      failed: total(families, "vend_vends_total", { event: "failed", ...vtu }),
      pending: total(families, "vend_vends_total", { event: "pending", ...vtu }),
    }).toEqual({ unreadable: 3, unanswered: 1, accepted: 7, successful: successes, failed: 2, pending: 5 });
  }, 30_000);

  test("verification in live mode goes to the provider", async () => {
    book.addCustomer("ikeja-electric", "45031234567", { Customer_Name: "ADA OBI", Address: "1 Allen Avenue" });
    const res = await client.post("/api/v1/bills/electricity/verify", { network: "ikedc", meter_number: "45031234567" });
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ customer_name: "ADA OBI", address: "1 Allen Avenue", meter_number: "4503****567" });
    const missing = await client.post("/api/v1/bills/electricity/verify", { network: "ikedc", meter_number: "45039999999" });
    expect(missing.status).toBe(404);
    expect(missing.json.code).toBe("CUSTOMER_NOT_FOUND");
  });
});
