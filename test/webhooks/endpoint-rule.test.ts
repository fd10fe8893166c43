import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, type SQL, sql } from "drizzle-orm";
import { webhookDueChannel } from "../../src/db/channels.ts";
import { webhookDeliveries } from "../../src/db/schema/index.ts";
import { withTransaction } from "../../src/db/transaction.ts";
import { enqueueAccountEvent } from "../../src/webhooks/statements/record-account-event.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { enqueueTestEvent } from "../helpers/webhook-receiver.ts";

/**
 * Which endpoints get an event is one rule, the database's `vend_webhook_endpoints_for` (migration 0020): the
 * outbox's statements and the low-balance trigger both call it. The server runs as the service role (on
 * PostgreSQL), on a database where PUBLIC may not call the rule, as on a cluster that revoked it: the service's
 * own grant (`vend migrate`) is what lets it schedule deliveries.
 */
let server: TestServer;
let account: Awaited<ReturnType<typeof fundedAccount>>;
const endpoints: Record<string, string> = {};
const owner = () => server.database.handle.db;

async function addEndpoint(client: HttpClient, name: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await client.post("/api/v1/webhook-endpoints", { url: `https://127.0.0.1:9/${name}`, ...body });
  expect(res.status).toBe(201);
  endpoints[name] = res.json.data.id;
  return res.json.data.id;
}

async function rows<T>(query: SQL): Promise<T[]> {
  const result = (await owner().execute(query)) as unknown as { rows?: T[] } | T[];
  return Array.isArray(result) ? result : (result.rows ?? []);
}

/** The names of the endpoints the event's deliveries go to, sorted. */
async function deliveredTo(eventId: string): Promise<string[]> {
  const rows = await owner().select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, eventId));
  const names = new Map(Object.entries(endpoints).map(([name, id]) => [id, name]));
  return rows.map((row) => names.get(row.endpointId) ?? row.endpointId).sort();
}

beforeAll(async () => {
  server = await startTestServer();
  await owner().execute(sql`revoke execute on function vend_webhook_endpoints_for(uuid, text, text) from public`);
  await owner().execute(sql`revoke execute on function vend_webhook_subscribed(text[], text) from public`);
  account = await fundedAccount(server, 100_000, "endpoint-rule");
  const { client } = account;
  await addEndpoint(client, "every-type");
  await addEndpoint(client, "low-balance-only", { event_types: ["wallet.balance_low"] });
  await addEndpoint(client, "other-type", { event_types: ["transaction.failed"] });
  const disabled = await addEndpoint(client, "disabled");
  expect((await client.request("PATCH", `/api/v1/webhook-endpoints/${disabled}`, { enabled: false })).status).toBe(200);
  const deleted = await addEndpoint(client, "deleted");
  expect((await client.request("DELETE", `/api/v1/webhook-endpoints/${deleted}`)).status).toBe(200);
  await addEndpoint(server.client(account.liveKey), "other-mode");
  const stranger = await server.createAccount("stranger");
  await addEndpoint(server.client(stranger.testKey), "other-account");
});
afterAll(async () => {
  await server?.close();
});

describe("the endpoint rule (vend_webhook_endpoints_for)", () => {
  test("the low-balance trigger and the outbox choose the same endpoints: not disabled, deleted, of the other mode or account, or unsubscribed", async () => {
    // The trigger: a threshold above the available balance alerts in the wallet's own update.
    expect((await account.client.request("PATCH", "/api/v1/wallet", { low_balance_threshold_kobo: 150_000 })).status).toBe(200);
    const [alert] = await rows<{ id: string }>(
      sql`select id from events where account_id = ${account.id}::uuid and type = 'wallet.balance_low'`,
    );
    expect(alert).toBeDefined();
    // The outbox, on the service's own connection: the same type through its statement.
    const recorded = await withTransaction(server.deps.db, (tx) =>
      enqueueAccountEvent(tx, { accountId: account.id, mode: "test", type: "wallet.balance_low", data: {} }),
    );

    const expected = ["every-type", "low-balance-only"];
    expect(await deliveredTo(alert?.id ?? "")).toEqual(expected);
    expect(await deliveredTo(recorded)).toEqual(expected);
  });

  test("an event of another type goes to the endpoints subscribed to it, or to every type", async () => {
    const { eventId } = await enqueueTestEvent(server, account.id, "test", "failed");
    expect(await deliveredTo(eventId)).toEqual(["every-type", "other-type"]);
  });

  test("the trigger's NOTIFY names the channel delivery listens on (SQL cannot import the constant)", async () => {
    const [alertFunction] = await rows<{ source: string }>(
      sql`select prosrc as source from pg_proc where proname = 'wallets_low_balance_alert'`,
    );
    const channels = [...(alertFunction?.source ?? "").matchAll(/pg_notify\('([^']*)'/g)].map((match) => match[1]);
    expect(channels).toEqual([webhookDueChannel]);
  });
});
