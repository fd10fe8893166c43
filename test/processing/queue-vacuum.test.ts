import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { processingRunner } from "../../src/background.ts";
import { queryRows } from "../../src/db/rows.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { vacuumQueue } from "../../src/orders/statements/vacuum-queue.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing, transactionRow, vendAirtime } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let client: HttpClient;

beforeAll(async () => {
  server = await startTestServer(fastProcessing());
  client = (await fundedAccount(server, 50_000_000)).client;
});
afterAll(() => server.close());

const db = () => server.database.handle.db;
const queueRows = async () => (await queryRows<{ n: number }>(db(), sql`select count(*)::int as n from transaction_queue`))[0]?.n;

describe("the work queue", () => {
  test("holds an order from its acceptance until it is final, then lets it go; a vacuum leaves what is queued", async () => {
    const done = await vendAirtime(client);
    await processingRunner({ ...server.deps, apiBaseUrl: server.url }, "w-vacuum").tick();
    expect((await transactionRow(db(), done)).status).toBe("successful");
    expect(await queueRows()).toBe(0);
    const waiting = await vendAirtime(client);
    expect(await queueRows()).toBe(1);
    // The finished order's dead queue entries go; the waiting order stays, and is still claimed and completed once.
    await vacuumQueue(db());
    expect(await queueRows()).toBe(1);
    await processingRunner({ ...server.deps, apiBaseUrl: server.url }, "w-vacuum").tick();
    expect((await transactionRow(db(), waiting)).status).toBe("successful");
    expect(await queueRows()).toBe(0);
    // Money: each wallet equals its ledger.
    expect(await reconcileWallets(db())).toEqual([]);
  });
});
