import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq, inArray, sql } from "drizzle-orm";
import { events, products, webhookDeliveries, webhookEndpoints } from "../../src/db/schema/index.ts";
import { webhookRunner } from "../../src/jobs/queues/delivery-queue.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startWebhookReceiver, verifyWebhook, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

/**
 * `catalogue.updated`: written with the product change, one event per account and mode with an enabled
 * endpoint subscribed to it, delivered like every other event. No money moves here: the tests count events
 * and deliveries in the database, and requests at the receivers.
 */
let server: TestServer;
let receiver: WebhookReceiver;
const db = () => server.database.handle.db;

interface Subscriber {
  id: string;
  testKey: string;
  endpointId: string;
  secret: string;
}
let plain: Subscriber; // endpoint with no subscription list: every type
let subscribed: Subscriber; // endpoint subscribed to catalogue.updated only
let otherTypes: Subscriber; // endpoint subscribed to transaction events only
let disabled: Subscriber; // endpoint disabled
let deleted: Subscriber; // endpoint removed
let noEndpoint: { id: string; testKey: string };

async function withEndpoint(name: string, path: string): Promise<Subscriber> {
  const account = await server.createAccount(name);
  const created = await server.client(account.testKey).post("/api/v1/webhook-endpoints", { url: `${receiver.url}${path}` });
  expect(created.status).toBe(201);
  return { id: account.id, testKey: account.testKey, endpointId: created.json.data.id, secret: created.json.data.secret };
}

beforeAll(async () => {
  server = await startTestServer();
  receiver = startWebhookReceiver();
  plain = await withEndpoint("Plain", "/plain");
  subscribed = await withEndpoint("Subscribed", "/subscribed");
  otherTypes = await withEndpoint("Other types", "/other");
  disabled = await withEndpoint("Disabled", "/disabled");
  deleted = await withEndpoint("Deleted", "/deleted");
  noEndpoint = await server.createAccount("No endpoint");
  // The subscription API belongs to the webhook endpoints work; the columns are set directly here.
  const set = (endpointId: string, values: Partial<typeof webhookEndpoints.$inferInsert>) =>
    db().update(webhookEndpoints).set(values).where(eq(webhookEndpoints.id, endpointId));
  await set(subscribed.endpointId, { eventTypes: ["catalogue.updated"] });
  await set(otherTypes.endpointId, { eventTypes: ["transaction.successful", "transaction.failed"] });
  await set(disabled.endpointId, { enabled: false, disabledReason: "test" });
  const removed = await server.client(deleted.testKey).delete(`/api/v1/webhook-endpoints/${deleted.endpointId}`);
  expect(removed.status).toBe(200);
}, 60_000);
afterAll(async () => {
  await receiver.close();
  await server.close();
});

const patchProduct = (code: string, body: unknown) => server.admin.request("PATCH", `/admin/v1/products/${code}`, body);
const tick = () => webhookRunner(server.deps, "test").tick();

async function catalogueEvents() {
  return db().select().from(events).where(eq(events.type, "catalogue.updated")).orderBy(events.createdAt, events.id);
}

async function productRow(code: string) {
  const [row] = await db().select().from(products).where(eq(products.code, code));
  if (!row) throw new Error(`no product ${code}`);
  return row;
}

describe("catalogue.updated", () => {
  test("a price change: one event for each subscribed account, delivered signed; none for the others", async () => {
    const before = await productRow("mtn-data-1gb-1d");
    const changed = await patchProduct("mtn-data-1gb-1d", { price_kobo: (before.priceKobo ?? 0) + 500 });
    expect(changed.status).toBe(200);

    const written = await catalogueEvents();
    expect(written.map((e) => e.accountId).sort()).toEqual([plain.id, subscribed.id].sort());
    for (const event of written) {
      expect(event.id).toMatch(/^evt_[0-9A-Za-z]{24}$/);
      expect(event.mode).toBe("test");
      expect(event.transactionId).toBeNull();
      expect(event.payload).toMatchObject({ id: event.id, type: "catalogue.updated", mode: "test" });
      expect(new Date(String(event.payload.created_at)).getTime()).toBe(event.createdAt.getTime());
    }
    expect(written[0]?.payload.data).toEqual({
      products: [
        {
          product: changed.json.data,
          changes: ["price_kobo"],
          previous: {
            price_kobo: before.priceKobo,
            min_amount_kobo: null,
            max_amount_kobo: null,
            discount_bps: 0,
            active: true,
          },
        },
      ],
      updated_at: changed.json.data.updated_at,
    });
    const deliveries = await db()
      .select()
      .from(webhookDeliveries)
      .where(
        inArray(
          webhookDeliveries.eventId,
          written.map((e) => e.id),
        ),
      );
    expect(deliveries.map((d) => d.endpointId).sort()).toEqual([plain.endpointId, subscribed.endpointId].sort());

    expect(await tick()).toBe(2);
    await receiver.waitFor(2);
    const byPath = new Map(receiver.received.map((r) => [r.path, r]));
    expect([...byPath.keys()].sort()).toEqual(["/plain", "/subscribed"]);
    for (const [path, owner] of [
      ["/plain", plain],
      ["/subscribed", subscribed],
    ] as const) {
      const request = byPath.get(path);
      if (!request) throw new Error(`nothing at ${path}`);
      const event = written.find((e) => e.accountId === owner.id);
      expect(request.headers["webhook-id"]).toBe(event?.id ?? "");
      expect(verifyWebhook(owner.secret, request)).toEqual(event?.payload);
    }
  });

  test("the event is listed to its account (contract-checked) and to no other", async () => {
    const listed = await server.client(plain.testKey).get("/api/v1/events");
    expect(listed.status).toBe(200);
    const [event] = listed.json.data.items;
    expect(event).toMatchObject({ type: "catalogue.updated", data: { products: [{ changes: ["price_kobo"] }] } });
    expect(event.deliveries).toEqual([expect.objectContaining({ endpoint_id: plain.endpointId, status: "succeeded" })]);
    for (const key of [noEndpoint.testKey, otherTypes.testKey, disabled.testKey, deleted.testKey]) {
      const none = await server.client(key).get("/api/v1/events");
      expect(none.json.data.items).toEqual([]);
    }
  });

  test("an edit that changes nothing, or only the name, sends nothing; the name still moves updated_at", async () => {
    const before = await productRow("glo-data-750mb-1d");
    const count = (await catalogueEvents()).length;
    const same = await patchProduct("glo-data-750mb-1d", { price_kobo: before.priceKobo, active: true, discount_bps: 0 });
    expect(same.status).toBe(200);
    expect((await productRow("glo-data-750mb-1d")).updatedAt).toEqual(before.updatedAt);
    const renamed = await patchProduct("glo-data-750mb-1d", { name: `${before.name} (renamed)` });
    expect(renamed.status).toBe(200);
    expect((await productRow("glo-data-750mb-1d")).updatedAt.getTime()).toBeGreaterThan(before.updatedAt.getTime());
    expect(await catalogueEvents()).toHaveLength(count);
  });

  test("a refused edit changes nothing and sends nothing", async () => {
    const before = await productRow("mtn-airtime");
    const count = (await catalogueEvents()).length;
    const refused = await patchProduct("mtn-airtime", { discount_bps: 150, price_kobo: 1000 });
    expect(refused.status).toBe(400);
    expect(await productRow("mtn-airtime")).toEqual(before);
    expect(await catalogueEvents()).toHaveLength(count);
  });

  test("the event commits with the change: when it cannot be written, the product is not changed either", async () => {
    const before = await productRow("mtn-data-1gb-1d");
    const count = (await catalogueEvents()).length;
    await db().execute(sql`create function refuse_catalogue_event() returns trigger language plpgsql as $$
      begin raise exception 'refused by test'; end $$`);
    await db().execute(sql`create trigger refuse_catalogue_event before insert on events for each row
      when (new.type = 'catalogue.updated') execute function refuse_catalogue_event()`);
    try {
      const res = await patchProduct("mtn-data-1gb-1d", { price_kobo: (before.priceKobo ?? 0) + 1 });
      expect(res.status).toBe(500);
    } finally {
      await db().execute(sql`drop trigger refuse_catalogue_event on events`);
      await db().execute(sql`drop function refuse_catalogue_event()`);
    }
    expect(await productRow("mtn-data-1gb-1d")).toEqual(before);
    expect(await catalogueEvents()).toHaveLength(count);
  });

  test("discount, range and availability changes are named with their previous values", async () => {
    const before = await productRow("airtel-airtime");
    const count = (await catalogueEvents()).length;
    const changed = await patchProduct("airtel-airtime", { discount_bps: before.discountBps + 25, max_amount_kobo: 4_000_000 });
    expect(changed.status).toBe(200);
    const disabledNow = await patchProduct("airtel-airtime", { active: false });
    expect(disabledNow.status).toBe(200);
    const written = (await catalogueEvents()).slice(count);
    expect(written).toHaveLength(4); // two changes, two subscribed accounts
    const ofPlain = written.filter((e) => e.accountId === plain.id).map((e) => e.payload.data);
    expect(ofPlain).toEqual([
      {
        products: [
          {
            product: changed.json.data,
            changes: ["max_amount_kobo", "discount_bps"],
            previous: {
              price_kobo: null,
              min_amount_kobo: before.minAmountKobo,
              max_amount_kobo: before.maxAmountKobo,
              discount_bps: before.discountBps,
              active: true,
            },
          },
        ],
        updated_at: changed.json.data.updated_at,
      },
      {
        products: [
          {
            product: { ...disabledNow.json.data, active: false },
            changes: ["active"],
            previous: expect.objectContaining({ discount_bps: before.discountBps + 25, active: true }),
          },
        ],
        updated_at: disabledNow.json.data.updated_at,
      },
    ]);
    expect((await patchProduct("airtel-airtime", { active: true })).status).toBe(200);
  });

  test("many subscribed accounts: one statement writes an event and a delivery for each", async () => {
    const extra = await Promise.all(Array.from({ length: 12 }, (_, i) => server.createAccount(`Bulk ${i}`)));
    await db()
      .insert(webhookEndpoints)
      .values(extra.map((a) => ({ accountId: a.id, mode: "test" as const, url: `${receiver.url}/bulk`, secret: "whsec_x" })));
    // A live-mode endpoint of a subscribed account gets that mode its own event.
    await db()
      .insert(webhookEndpoints)
      .values({ accountId: plain.id, mode: "live", url: `${receiver.url}/live`, secret: "whsec_y" });
    const count = (await catalogueEvents()).length;
    expect((await patchProduct("9mobile-data-1gb-1d", { price_kobo: 99_900 })).status).toBe(200);
    const written = (await catalogueEvents()).slice(count);
    const keys = written.map((e) => `${e.accountId}/${e.mode}`).sort();
    expect(keys).toEqual(
      [...extra.map((a) => `${a.id}/test`), `${plain.id}/test`, `${plain.id}/live`, `${subscribed.id}/test`].sort(),
    );
    expect(new Set(written.map((e) => e.id)).size).toBe(written.length);
    const [deliveries] = await db()
      .select({ n: sql<number>`count(*)::int`, events: sql<number>`count(distinct ${webhookDeliveries.eventId})::int` })
      .from(webhookDeliveries)
      .where(
        and(
          inArray(
            webhookDeliveries.eventId,
            written.map((e) => e.id),
          ),
        ),
      );
    expect(deliveries).toEqual({ n: written.length, events: written.length });
  });
});
