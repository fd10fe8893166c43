import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { ledgerEntries, sandboxOrders, webhookDeliveries } from "../../src/db/schema/index.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import { fastProcessing } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startWebhookReceiver, verifyWebhook, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let server: TestServer;
let failedOnly: WebhookReceiver;
let everything: WebhookReceiver;

beforeAll(async () => {
  server = await startTestServer(fastProcessing(), { background: true });
  failedOnly = startWebhookReceiver();
  everything = startWebhookReceiver();
});
afterAll(async () => {
  await server.close();
  await failedOnly.close();
  await everything.close();
});

const funded = 1_000_000;

describe("subscriptions (real vends, webhooks sent by the server's own delivery loop)", () => {
  test("an endpoint subscribed to transaction.failed receives only those; one with no list receives every event", async () => {
    const account = await fundedAccount(server, funded, "subscriptions");
    const { client } = account;
    const narrow = await client.post("/api/v1/webhook-endpoints", { url: failedOnly.url, event_types: ["transaction.failed"] });
    expect(narrow.status).toBe(201);
    expect(narrow.json.data.event_types).toEqual(["transaction.failed"]);
    const wide = (await client.post("/api/v1/webhook-endpoints", { url: everything.url })).json.data;
    expect(wide.event_types).toBeNull();

    // Sandbox: a number ending 1111 fails at once, anything else succeeds at once.
    const phones = ["08031230001", "08031231111", "08031230002", "08031231111"];
    const answers = await Promise.all(
      phones.map((phone) =>
        client.post(
          "/api/v1/vend",
          { product_code: "mtn-airtime", phone_number: phone, amount_kobo: 10_000 },
          { ...idem(), query: { wait: 10 } },
        ),
      ),
    );
    const finals = answers.map((res) => res.json.data as { reference: string; status: string; price_kobo: number });
    expect(finals.map((t) => t.status)).toEqual(["successful", "failed", "successful", "failed"]);

    const all = await everything.waitFor(4, 20_000);
    const wideEvents = all.map((r) => verifyWebhook(wide.secret, r) as { type: string; data: { reference: string } });
    expect(wideEvents.map((e) => e.data.reference).sort()).toEqual(finals.map((t) => t.reference).sort());
    const failedEvents = (await failedOnly.waitFor(2, 20_000)).map(
      (r) => verifyWebhook(narrow.json.data.secret, r) as { type: string; data: { reference: string } },
    );
    expect(failedEvents.map((e) => e.type)).toEqual(["transaction.failed", "transaction.failed"]);
    expect(failedEvents.map((e) => e.data.reference).sort()).toEqual(
      finals
        .filter((t) => t.status === "failed")
        .map((t) => t.reference)
        .sort(),
    );
    // Successful events were never scheduled for the narrow endpoint (not merely not sent yet).
    const narrowDeliveries = await server.database.handle.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.endpointId, narrow.json.data.id));
    expect(narrowDeliveries).toHaveLength(2);
    expect(failedOnly.received).toHaveLength(2);

    // Money: the two successes were captured, the two failures released, nothing is held; the ledger reconciles.
    const wallet = (await client.get("/api/v1/wallet")).json.data;
    const price = finals[0]?.price_kobo ?? 0;
    expect(wallet).toMatchObject({ balance_kobo: funded - 2 * price, held_kobo: 0 });
    expect(await reconcileWallets(server.database.handle.db)).toEqual([]);
    const entries = await server.database.handle.db
      .select({ kind: ledgerEntries.kind, n: sql<number>`count(*)::int` })
      .from(ledgerEntries)
      .groupBy(ledgerEntries.kind);
    expect(Object.fromEntries(entries.map((e) => [e.kind, Number(e.n)]))).toEqual({ fund: 1, hold: 4, capture: 2, release: 2 });
    // One provider request per order, none twice.
    expect(await server.database.handle.db.select().from(sandboxOrders)).toHaveLength(4);
  });
});
