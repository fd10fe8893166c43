import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sandboxOrders } from "../../src/db/schema/index.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing, sandboxCallback } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";
import { startWebhookReceiver, verifyWebhook, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let server: TestServer;
let client: HttpClient;
let receiver: WebhookReceiver;
let secret: string;
const funded = 10_000_000;

beforeAll(async () => {
  server = await startTestServer(fastProcessing(), { background: true });
  client = (await fundedAccount(server, funded)).client;
  receiver = startWebhookReceiver();
  const endpoint = await client.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/hooks` });
  secret = endpoint.json.data.secret;
});
afterAll(async () => {
  await server.close();
  await receiver.close();
});

interface Row {
  name: string;
  path: string;
  body: Record<string, unknown>;
  final: "successful" | "failed";
}

// The destination's last four digits choose the sandbox outcome (openapi.yaml, `vendProduct`).
const rows: Row[] = [
  {
    name: "anything else: successful at once",
    path: "/api/v1/vend",
    body: { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 },
    final: "successful",
  },
  {
    name: "1111: failed at once",
    path: "/api/v1/vend",
    body: { product_code: "mtn-airtime", phone_number: "08031231111", amount_kobo: 10_000 },
    final: "failed",
  },
  {
    name: "2222: pending, then a signed callback: successful",
    path: "/api/v1/vend",
    body: { product_code: "glo-airtime", phone_number: "08051232222", amount_kobo: 20_000 },
    final: "successful",
  },
  {
    name: "3333: pending, then a signed callback: failed",
    path: "/api/v1/vend",
    body: { product_code: "airtel-airtime", phone_number: "08021233333", amount_kobo: 30_000 },
    final: "failed",
  },
  {
    name: "5555: provider error first; re-query finds it successful",
    path: "/api/v1/vend",
    body: { product_code: "mtn-airtime", phone_number: "08031235555", amount_kobo: 50_000 },
    final: "successful",
  },
  {
    name: "6666: successful, data bundle only partly delivered",
    path: "/api/v1/vend",
    body: { product_code: "mtn-data-1gb-1d", phone_number: "08031236666" },
    final: "successful",
  },
  {
    name: "electricity: token, units and receipt in metadata",
    path: "/api/v1/bills/electricity",
    body: { network: "ikedc", meter_number: "45031234567", phone_number: "08031234567", amount_kobo: 200_000 },
    final: "successful",
  },
  {
    name: "cable: successful at once",
    path: "/api/v1/bills/cable",
    body: { biller: "dstv", smartcard_number: "7031234567", product_code: "dstv-padi" },
    final: "successful",
  },
];

const results = new Map<
  string,
  { reference: string; status: string; price: number; metadata: Record<string, string>; completed_at: string | null }
>();

describe("each sandbox row, end to end over HTTP", () => {
  test("wait returns each final state; webhooks, listing, wallet and ledger agree", async () => {
    const answers = await Promise.all(
      rows.map((row) =>
        client.post(row.path, { ...row.body, metadata: { order_id: row.name } }, { ...idem(), query: { wait: 10 } }),
      ),
    );
    for (const [i, row] of rows.entries()) {
      const answer = answers[i];
      expect({ row: row.name, http: answer?.status, status: answer?.json.data.status }).toEqual({
        row: row.name,
        http: 202,
        status: row.final,
      });
      const txn = answer?.json.data;
      expect(txn.completed_at).toBeString();
      results.set(row.name, {
        reference: txn.reference,
        status: txn.status,
        price: txn.price_kobo,
        metadata: txn.metadata,
        completed_at: txn.completed_at,
      });
    }

    const electricity = results.get("electricity: token, units and receipt in metadata");
    expect(electricity?.metadata.token).toMatch(/^\d{4}(-\d{4}){4}$/);
    expect(electricity?.metadata.units).toMatch(/kWh$/);
    expect(electricity?.metadata.receipt_number).toBeString();
    const partial = results.get("6666: successful, data bundle only partly delivered");
    expect(partial?.metadata).toMatchObject({ requested_mb: "1024", delivered_mb: "512", partial: "true" });
    expect(results.get("anything else: successful at once")?.metadata.order_id).toBe("anything else: successful at once");

    // Listing shows the same final states, with completed_at.
    const listed = await client.get("/api/v1/transactions", { query: { limit: 100 } });
    for (const result of results.values()) {
      const item = listed.json.data.items.find((t: { reference: string }) => t.reference === result.reference);
      expect({ status: item?.status, completed: item?.completed_at }).toEqual({
        status: result.status,
        completed: result.completed_at,
      });
    }

    // A real receiver gets one signed event per final transaction, caller metadata included.
    // Waited for by reference, not by count: delivery is at least once, and on a busy machine an attempt that
    // outlives the webhook timeout is sent again, so a count can be reached before the last event arrives.
    const eventsReceived = () =>
      receiver.received.map(
        (request) =>
          verifyWebhook(secret, request) as {
            type: string;
            data: { reference: string; status: string; metadata: Record<string, string> };
          },
      );
    await waitUntil(
      () => [...results.values()].every((result) => eventsReceived().some((e) => e.data.reference === result.reference)),
      { what: `a webhook for each of the ${rows.length} final transactions` },
    );
    const events = eventsReceived();
    for (const [name, result] of results) {
      const event = events.find((e) => e.data.reference === result.reference);
      expect({ name, type: event?.type, order: event?.data.metadata.order_id }).toEqual({
        name,
        type: `transaction.${result.status}`,
        order: name,
      });
    }

    // Money: successes captured, failures released, nothing held; the ledger reconciles.
    const spent = [...results.values()].filter((r) => r.status === "successful").reduce((sum, r) => sum + r.price, 0);
    const wallet = (await client.get("/api/v1/wallet")).json.data;
    expect(wallet).toMatchObject({ balance_kobo: funded - spent, held_kobo: 0, available_kobo: funded - spent });
    expect(await reconcileWallets(server.database.handle.db)).toEqual([]);

    // The sandbox saw every reference once: nothing was vended twice (5555 was re-queried, not resent).
    const orders = await server.database.handle.db.select().from(sandboxOrders);
    expect(orders.every((o) => o.vendCount === 1)).toBe(true);
  }, 30_000);

  test("4444: stays pending (wait ends at its budget); re-query keeps it pending; a signed callback makes it final", async () => {
    const started = performance.now();
    const res = await client.post(
      "/api/v1/vend",
      { product_code: "mtn-airtime", phone_number: "08031234444", amount_kobo: 10_000 },
      { ...idem(), query: { wait: 1 } },
    );
    expect(res.json.data.status).toBe("pending");
    expect(performance.now() - started).toBeGreaterThanOrEqual(900);
    const reference: string = res.json.data.reference;
    const requeried = await server.admin.post(`/admin/v1/transactions/${reference}/requery`);
    expect(requeried.json.data.status).toBe("pending");
    expect((await client.get("/api/v1/wallet")).json.data.held_kobo).toBe(9_700);

    const before = receiver.received.length;
    const callback = sandboxCallback({ event_id: "qa-1", reference, status: "successful", provider_reference: "QA-4444" });
    const applied = await server.anonymous.post("/callbacks/providers/sandbox", undefined, {
      raw: callback.raw,
      headers: callback.headers,
    });
    expect(applied.status).toBe(200);
    expect(applied.json.data).toMatchObject({ reference, status: "successful" });
    expect((await client.get("/api/v1/wallet")).json.data.held_kobo).toBe(0);
    const [event] = (await receiver.waitFor(before + 1, 5000)).slice(before);
    expect(
      (verifyWebhook(secret, event ?? { path: "", headers: {}, body: "" }) as { data: { reference: string } }).data.reference,
    ).toBe(reference);
    expect(await reconcileWallets(server.database.handle.db)).toEqual([]);
  }, 30_000);
});
